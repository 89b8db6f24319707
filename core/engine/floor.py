"""A device's step floor: seconds per training step of a model that does almost nothing, once per process.

The same execution mode, the same loop and the same jit_compile as a run, on a trivial model (one
input feature -> Dense(10), batch 1), so nearly all that is left of a step is the cost of running
one at all: Python, op dispatch, Keras' bookkeeping, the host-device sync. Steps x floor is the
overhead no device speed removes; only fewer, larger steps do. bench/floor.py compares each mode's epoch with it;
a run's own fixed cost per step is core.engine.profile's.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from core.engine import data as datasets
from core.engine import executions
from core.engine.job import never_stop
from core.engine.tf_setup import tf
from core.settings.config import TrainConfig

FLOOR_STEPS = 256  # per epoch; the first epoch traces (and with XLA compiles), the rest are timed
TIMED_EPOCHS = 2  # the fastest counts: anything else on the machine only ever slows a step

_cache: dict[tuple[str, str, bool], float] = {}
_lock = threading.Lock()


def measure(tf_device: str, execution: str, jit_compile: bool) -> float:
    """Seconds per step of a trivial step on `tf_device` in `execution` mode, measured once per process."""
    key = (tf_device, execution, jit_compile)
    with _lock:
        if key not in _cache:
            _cache[key] = benchmark(tf_device, execution, jit_compile)
        return _cache[key]


def benchmark(tf_device: str, execution: str, jit_compile: bool) -> float:
    """Run the trivial model's epochs now, uncached; seconds per step of the fastest timed epoch."""
    t = tf()
    import keras

    config = TrainConfig(dataset="synthetic", train_subset=FLOOR_STEPS, batch_size=1, execution=execution)
    zeros = np.zeros((FLOOR_STEPS, 1), np.float32)
    labels = np.zeros(FLOOR_STEPS, np.int32)
    data = datasets.Dataset("floor", zeros, labels, zeros[:1], labels[:1], "zeros")
    with t.device(tf_device):
        model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(10, activation="softmax")], name="floor")
        mode = executions.REGISTRY[execution](config, model, data, jit_compile)
        best = float("inf")
        for epoch in range(1 + TIMED_EPOCHS):
            mode.prepare_epoch()
            began = time.perf_counter()
            mode.train_epoch(never_stop)
            if epoch:
                best = min(best, time.perf_counter() - began)
    return best / FLOOR_STEPS
