"""A device's limits: peak GFLOP/s of a matrix multiply in a dtype (float32 unless asked) and memory bandwidth (a read-and-reduce), once per process.

A large square matmul is the best case for any processor (the most arithmetic per byte
moved), so what it reaches is the ceiling a model's training can be compared with:
utilisation = achieved GFLOP/s / peak GFLOP/s. On GPUs from Ampere on, TensorFlow runs
float32 matmuls as TF32 by default, for the benchmark and for training alike, so the two agree. A
mixed-precision run is compared with the peak in its compute dtype (a bfloat16 matmul for mixed_bfloat16).

Bandwidth is the other roof of the roofline (core.roofline): summing a float32 array far larger
than any cache reads every byte once and does one add per 4 bytes, so its speed is the memory's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from core.engine.tf_setup import tf

# Square matrix sizes, per device kind: big enough to be compute-bound, small enough that one
# multiply takes milliseconds (about 2 GFLOP on a CPU, 1.1 TFLOP on a GPU).
MATRIX_SIZE = {"CPU": 1024, "GPU": 8192}
WARMUP_MULTIPLIES = 2
# Each timed trial runs enough multiplies to last about this long; the best trial counts, since
# anything else running on the machine (other processes on a shared CPU) only ever slows it.
TRIALS = 5
TRIAL_SECONDS = {"CPU": 0.1, "GPU": 0.05}


@dataclass(frozen=True)
class Peak:
    """What the microbenchmark measured on one device."""

    tf_device: str
    gflops: float
    matrix_size: int
    multiplies: int  # per timed trial
    seconds: float  # the whole measurement, warm-up included
    dtype: str = "float32"  # the matrices' dtype

    def to_dict(self) -> dict:
        """Plain dict for JSON."""
        return asdict(self)


@dataclass(frozen=True)
class Bandwidth:
    """What the read-and-reduce microbenchmark measured on one device."""

    tf_device: str
    gbs: float  # GB/s, 1e9 bytes a second
    array_bytes: int
    reads: int  # reductions per timed trial
    seconds: float  # the whole measurement, warm-up included

    def to_dict(self) -> dict:
        """Plain dict for JSON."""
        return asdict(self)


# Bytes summed per read, per device kind: past the last-level cache (up to a few hundred MB on a server
# CPU, ~100 MB on a GPU), so the reads come from memory, not cache.
ARRAY_BYTES = {"CPU": 512 * 2**20, "GPU": 1024 * 2**20}

_cache: dict[tuple[str, str], Peak] = {}
_bandwidth_cache: dict[str, Bandwidth] = {}
_lock = threading.Lock()


class Stopped(Exception):
    """A measurement cut short because its run was stopped: nothing is kept of it."""


def measure(tf_device: str, dtype: str = "float32", should_stop: Callable[[], bool] | None = None) -> Peak:
    """Peak matmul GFLOP/s of `tf_device` ('/CPU:0', '/GPU:0') in `dtype`, measured once per process and dtype.

    should_stop: asked between trials (0.1 s each); True raises Stopped (a run's Stop is not held up by it)."""
    with _lock:
        if (tf_device, dtype) not in _cache:
            _cache[tf_device, dtype] = benchmark(tf_device, dtype, should_stop)
        return _cache[tf_device, dtype]


def measure_bandwidth(tf_device: str, should_stop: Callable[[], bool] | None = None) -> Bandwidth:
    """Memory bandwidth of `tf_device` in GB/s, measured once per process (a second call reuses it); should_stop
    as measure()'s."""
    with _lock:
        if tf_device not in _bandwidth_cache:
            _bandwidth_cache[tf_device] = bandwidth_benchmark(tf_device, should_stop)
        return _bandwidth_cache[tf_device]


def _stop_if(should_stop: Callable[[], bool] | None) -> None:
    if should_stop is not None and should_stop():
        raise Stopped


def utilisation(achieved_gflops: float | None, peak: Peak | float | None) -> float | None:
    """achieved / peak as a fraction (0.25 = 25 %); None where either is unknown."""
    peak_gflops = peak.gflops if isinstance(peak, Peak) else peak
    if not achieved_gflops or not peak_gflops:
        return None
    return achieved_gflops / peak_gflops


def benchmark(tf_device: str, dtype: str = "float32", should_stop: Callable[[], bool] | None = None) -> Peak:
    """Run the microbenchmark now, uncached (measure() is what runs and sweeps use)."""
    t = tf()
    kind = "GPU" if "GPU" in tf_device.upper() else "CPU"
    n = MATRIX_SIZE[kind]
    began = time.perf_counter()
    with t.device(tf_device):
        a = t.cast(t.random.uniform((n, n), dtype=t.float32), dtype)
        b = t.cast(t.random.uniform((n, n), dtype=t.float32), dtype)

        def run(multiplies: int) -> float:
            _stop_if(should_stop)
            start = time.perf_counter()
            for _ in range(multiplies):
                c = t.linalg.matmul(a, b)
            # GPU ops run asynchronously; fetching a value waits for every queued multiply.
            float(t.reduce_sum(t.cast(c[:1, :1], t.float32)).numpy())
            return time.perf_counter() - start

        once = min(run(1) for _ in range(WARMUP_MULTIPLIES))
        multiplies = max(1, round(TRIAL_SECONDS[kind] / once))
        best = min(run(multiplies) for _ in range(TRIALS))
    flops = 2 * n**3 * multiplies  # n^3 multiply-adds per product
    return Peak(
        tf_device=tf_device,
        gflops=flops / best / 1e9,
        matrix_size=n,
        multiplies=multiplies,
        seconds=time.perf_counter() - began,
        dtype=dtype,
    )


def bandwidth_benchmark(tf_device: str, should_stop: Callable[[], bool] | None = None) -> Bandwidth:
    """Run the read-and-reduce microbenchmark now, uncached (measure_bandwidth() is what runs use)."""
    t = tf()
    kind = "GPU" if "GPU" in tf_device.upper() else "CPU"
    size = ARRAY_BYTES[kind]
    began = time.perf_counter()
    with t.device(tf_device):
        a = t.ones((size // 4,), dtype=t.float32)
        # A tf.function: eager reduce_sum would add Python's dispatch to each read on a fast GPU.
        reduce = t.function(lambda x: t.reduce_sum(x))

        def run(reads: int) -> float:
            _stop_if(should_stop)
            start = time.perf_counter()
            for _ in range(reads):
                s = reduce(a)
            float(s.numpy())  # waits for every queued read (GPU ops run asynchronously)
            return time.perf_counter() - start

        once = min(run(1) for _ in range(WARMUP_MULTIPLIES))
        reads = max(1, round(TRIAL_SECONDS[kind] / once))
        best = min(run(reads) for _ in range(TRIALS))
    return Bandwidth(
        tf_device=tf_device,
        gbs=size * reads / best / 1e9,
        array_bytes=size,
        reads=reads,
        seconds=time.perf_counter() - began,
    )
