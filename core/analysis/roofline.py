"""The roofline model (Williams, Waterman and Patterson, 2009) of a run or a sweep, from figures already measured.

A device cannot beat min(peak GFLOP/s, bandwidth GB/s x FLOP per byte). From a run's result (its device info:
peak_gflops, bandwidth_gbs, train_flops_per_sample, train_bytes_per_sample) this module places the run on its
device's roofline at its steady throughput; where its epoch's time goes, in measured parts, is core.analysis.why. No
TensorFlow here: the figures were measured by core.engine (peak, traffic).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from core.analysis import compare


@dataclass(frozen=True)
class Roof:
    """One device's roofs: the compute peak (GFLOP/s) and the bandwidth slope (GB/s); either may be unknown."""

    device: str
    peak_gflops: float | None
    bandwidth_gbs: float | None

    @property
    def ridge(self) -> float | None:
        """FLOP per byte where the bandwidth slope meets the peak: below it, memory bounds the work."""
        if not self.peak_gflops or not self.bandwidth_gbs:
            return None
        return self.peak_gflops / self.bandwidth_gbs

    def attainable(self, intensity: float) -> float | None:
        """The most GFLOP/s this device allows at `intensity` FLOP per byte."""
        roofs = [r for r in (self.peak_gflops, self.bandwidth_gbs and self.bandwidth_gbs * intensity) if r]
        return min(roofs) if roofs else None


@dataclass(frozen=True)
class Point:
    """A run (or a sweep point) on the roofline: its arithmetic intensity and what it achieved."""

    device: str
    model: str
    batch_size: int
    intensity: float  # training FLOPs / bytes moved
    gflops: float  # achieved GFLOP/s
    samples_per_second: float


def roof(device: str, info: dict) -> Roof:
    """A device's roofs from a sweep's device info (peak_gflops, bandwidth_gbs)."""
    return Roof(device, positive(info.get("peak_gflops")), positive(info.get("bandwidth_gbs")))


def limits(result) -> dict:
    """A run's measured roofs as a dict of core.results.measurements.Limits' fields ({} where none were measured)."""
    found = result.measured.limits if result.measured else None
    return asdict(found) if found else {}


def run_roof(result, device: str) -> Roof:
    """A run's device's roofs, as the run measured them."""
    return roof(device, limits(result))


def run_point(result, device: str) -> Point | None:
    """A RunResult on the roofline at its steady throughput (core.analysis.compare's measure); None before epoch 2 or
    without bytes."""
    info = result.device
    flops, moved = info.get("train_flops_per_sample"), positive(info.get("train_bytes_per_sample"))
    rate = compare.throughput(result)
    if not flops or not moved or not rate:
        return None
    config = result.config
    return Point(device, str(config.get("model")), int(config["batch_size"]), flops / moved, flops * rate / 1e9, rate)


def sweep_points(points, model: dict) -> list[Point]:
    """A sweep's measured points (SweepPoints) on the roofline; bytes per sample differ by batch (weights amortise)."""
    flops, per_sample, per_step = (model.get(k) for k in ("train_flops_per_sample", "sample_bytes", "step_bytes"))
    if not flops or per_sample is None or per_step is None:
        return []
    return [
        Point(
            p.label,
            str(model.get("name")),
            p.batch_size,
            flops / (per_sample + per_step / p.batch_size),
            p.gflops_per_second,
            p.samples_per_second,
        )
        for p in points
        if p.samples_per_second and p.gflops_per_second
    ]


def si(value: float, unit: str) -> str:
    """3.1e6, 'FLOP' -> '3.1 MFLOP'; 188e6, 'B' -> '188 MB'."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if abs(value) >= scale:
            v = value / scale
            return f"{v:.0f} {prefix}{unit}" if v >= 10 else f"{v:.1f} {prefix}{unit}"
    return f"{value:g} {unit}"


def positive(value) -> float | None:
    """value as a float where it is a positive finite number (a measured figure), else None (not measured)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)
