"""Import TensorFlow once, quietly, and do the one-time device setup before any op."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_tf = None

# Number of logical CPU devices to create (cpu:0..cpu:N-1), for tests and demos of
# placement on a machine with one physical CPU. Read once, before TensorFlow starts.
LOGICAL_CPUS_ENV = "TFDASH_LOGICAL_CPUS"


@contextmanager
def _quiet_stderr():
    """Send C++ start-up chatter (oneDNN, CUDA probing) to a file instead of the terminal.

    TensorFlow logs through absl before TF_CPP_MIN_LOG_LEVEL is read, so the only
    reliable way to keep a CLI's output clean is to redirect file descriptor 2.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def tf():
    """Return the tensorflow module, importing it and configuring devices on first use."""
    global _tf
    if _tf is not None:
        return _tf
    with _lock:
        if _tf is None:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
            with _quiet_stderr():
                import tensorflow

                _configure(tensorflow)
            _tf = tensorflow
    return _tf


def _configure(tensorflow) -> None:
    """Memory growth on every GPU and optional logical CPUs: allowed once, before any op."""
    gpus = tensorflow.config.list_physical_devices("GPU")
    for gpu in gpus:
        try:
            # Without this TF reserves nearly all GPU memory at the first op.
            tensorflow.config.experimental.set_memory_growth(gpu, True)
        except RuntimeError:  # devices already initialised by someone else
            pass
    n_cpus = os.environ.get(LOGICAL_CPUS_ENV, "").strip()
    if n_cpus:
        count = int(n_cpus)
        cpus = tensorflow.config.list_physical_devices("CPU")
        try:
            tensorflow.config.set_logical_device_configuration(
                cpus[0], [tensorflow.config.LogicalDeviceConfiguration() for _ in range(count)]
            )
        except RuntimeError:
            pass
