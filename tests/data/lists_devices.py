"""Imported by a zygote in tests/test_zygote.py: lists the devices, as a page's GPU check would (CUDA's cuInit)."""

import tensorflow as tf

tf.config.list_physical_devices()
