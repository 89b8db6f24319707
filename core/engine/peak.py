"""A device's limits: peak GFLOP/s of a matrix multiply in a dtype (float32 unless asked) and memory bandwidth (a
read-and-reduce), once per process.

Each figure is the median of TRIES timed tries, with every try kept (the spread); core.engine.limits shares one
server's figures with every run it starts, so the runs of a comparison are held against the same roofs.

A large square matmul is the best case for any processor (the most arithmetic per byte
moved), so what it reaches is the ceiling a model's training can be compared with:
utilisation = achieved GFLOP/s / peak GFLOP/s. On GPUs from Ampere on, TensorFlow runs
float32 matmuls as TF32 by default, for the benchmark and for training alike, so the two agree. A
mixed-precision run is compared with the peak in its compute dtype (a bfloat16 matmul for mixed_bfloat16).

Bandwidth is the other roof of the roofline (core.analysis.roofline): summing a float32 array far larger
than any cache reads every byte once and does one add per 4 bytes, so its speed is the memory's.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass

from core.engine.tf_setup import tf

# Square matrix sizes, per device type: big enough to be compute-bound, small enough that one
# multiply takes milliseconds (about 2 GFLOP on a CPU, 1.1 TFLOP on a GPU).
MATRIX_SIZE = {"CPU": 1024, "GPU": 8192}
WARMUP_MULTIPLIES = 2
# Each timed try runs enough multiplies to last about this long; the figure is the median of the tries, so one
# try slowed by another process (or sped by a turbo burst) moves it little, and their spread is kept.
TRIES = 5
TRIAL_SECONDS = {"CPU": 0.1, "GPU": 0.05}


@dataclass(frozen=True)
class Peak:
    """What the microbenchmark measured on one device."""

    gflops: float
    seconds: float  # the whole measurement, warm-up included
    dtype: str = "float32"  # the matrices' dtype
    tries: tuple[float, ...] = ()  # GFLOP/s of each try; gflops is their median


@dataclass(frozen=True)
class Bandwidth:
    """What the read-and-reduce microbenchmark measured on one device."""

    gbs: float  # GB/s, 1e9 bytes a second
    tries: tuple[float, ...] = ()  # GB/s of each try; gbs is their median


# Bytes summed per read, per device type: past the last-level cache (up to a few hundred MB on a server
# CPU, ~100 MB on a GPU), so the reads come from memory, not cache.
ARRAY_BYTES = {"CPU": 512 * 2**20, "GPU": 1024 * 2**20}

_cache: dict[tuple[str, str], Peak] = {}
_bandwidth_cache: dict[str, Bandwidth] = {}
_lock = threading.Lock()


def measure(tf_device: str, dtype: str = "float32") -> Peak:
    """Peak matmul GFLOP/s of `tf_device` ('/CPU:0', '/GPU:0') in `dtype`, measured once per process and dtype."""
    with _lock:
        if (tf_device, dtype) not in _cache:
            _cache[tf_device, dtype] = benchmark(tf_device, dtype)
        return _cache[tf_device, dtype]


def measure_bandwidth(tf_device: str) -> Bandwidth:
    """Memory bandwidth of `tf_device` in GB/s, measured once per process (a second call reuses it)."""
    with _lock:
        if tf_device not in _bandwidth_cache:
            _bandwidth_cache[tf_device] = bandwidth_benchmark(tf_device)
        return _bandwidth_cache[tf_device]


def clear() -> None:
    """Forget this process's figures, so the next measure() measures again."""
    with _lock:
        _cache.clear()
        _bandwidth_cache.clear()


def utilisation(achieved_gflops: float | None, peak: Peak | float | None) -> float | None:
    """achieved / peak as a fraction (0.25 = 25 %); None where either is unknown."""
    peak_gflops = peak.gflops if isinstance(peak, Peak) else peak
    if not achieved_gflops or not peak_gflops:
        return None
    return achieved_gflops / peak_gflops


def benchmark(tf_device: str, dtype: str = "float32", tries: int = TRIES) -> Peak:
    """Run the microbenchmark now, uncached (measure() is what runs and sweeps use): the median of `tries` tries."""
    t = tf()
    device_type = "GPU" if "GPU" in tf_device.upper() else "CPU"
    n = MATRIX_SIZE[device_type]
    began = time.perf_counter()
    with t.device(tf_device):
        a = t.cast(t.random.uniform((n, n), dtype=t.float32), dtype)
        b = t.cast(t.random.uniform((n, n), dtype=t.float32), dtype)

        def run(multiplies: int) -> float:
            start = time.perf_counter()
            for _ in range(multiplies):
                c = t.linalg.matmul(a, b)
            # GPU ops run asynchronously; fetching a value waits for every queued multiply.
            float(t.reduce_sum(t.cast(c[:1, :1], t.float32)).numpy())
            return time.perf_counter() - start

        once = min(run(1) for _ in range(WARMUP_MULTIPLIES))
        multiplies = max(1, round(TRIAL_SECONDS[device_type] / once))
        flops = 2 * n**3 * multiplies  # n^3 multiply-adds per product
        rates = tuple(flops / run(multiplies) / 1e9 for _ in range(tries))
    return Peak(gflops=statistics.median(rates), seconds=time.perf_counter() - began, dtype=dtype, tries=rates)


def bandwidth_benchmark(tf_device: str, tries: int = TRIES) -> Bandwidth:
    """Run the read-and-reduce microbenchmark now, uncached (measure_bandwidth() is what runs use): median of
    `tries`."""
    t = tf()
    device_type = "GPU" if "GPU" in tf_device.upper() else "CPU"
    size = ARRAY_BYTES[device_type]
    with t.device(tf_device):
        a = t.ones((size // 4,), dtype=t.float32)
        # A tf.function: eager reduce_sum would add Python's dispatch to each read on a fast GPU.
        reduce = t.function(lambda x: t.reduce_sum(x))

        def run(reads: int) -> float:
            start = time.perf_counter()
            for _ in range(reads):
                s = reduce(a)
            float(s.numpy())  # waits for every queued read (GPU ops run asynchronously)
            return time.perf_counter() - start

        once = min(run(1) for _ in range(WARMUP_MULTIPLIES))
        reads = max(1, round(TRIAL_SECONDS[device_type] / once))
        rates = tuple(size * reads / run(reads) / 1e9 for _ in range(tries))
    return Bandwidth(gbs=statistics.median(rates), tries=rates)
