"""The roofline model (Williams, Waterman and Patterson, 2009) of a run or a sweep, from figures already measured.

A device cannot beat min(peak GFLOP/s, bandwidth GB/s x FLOP per byte), and a step cannot be
shorter than the device's step floor. From a run's result (its device info: peak_gflops,
bandwidth_gbs, step_floor_seconds, train_flops_per_sample, train_bytes_per_sample,
steps_per_epoch) this module places the run on its device's roofline and splits a steady-state
epoch into compute at peak, memory traffic at the measured bandwidth, step overhead (floor x
steps) and the rest. These are models, not profiles: the parts are lower bounds each on its own,
they may overlap, and nothing forces them to add up; the rest is whatever they leave unexplained.
No TensorFlow here: the figures were measured by core.engine (peak, floor, traffic).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

BOUNDS = ("compute", "memory", "overhead")
ADVICE = {
    "compute": "A faster device helps; a larger batch will not.",
    "memory": "More memory bandwidth helps (a GPU has several times a CPU's); so do fewer bytes per FLOP.",
    "overhead": "A larger batch helps; a GPU will not.",
}


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


@dataclass(frozen=True)
class Breakdown:
    """Where a steady-state epoch's seconds go, by the model; a part is None where its figure was not measured."""

    epoch_seconds: float
    steps: int
    flops_per_step: float
    bytes_per_step: float | None
    compute: float | None  # the epoch's FLOPs at the device's peak
    memory: float | None  # the epoch's bytes at the measured bandwidth
    overhead: float | None  # step floor x steps
    peak_gflops: float | None = None
    bandwidth_gbs: float | None = None

    @property
    def rest(self) -> float:
        """Epoch seconds the three parts leave unexplained; negative where they overlap by more than the epoch."""
        return self.epoch_seconds - sum(p for p in (self.compute, self.memory, self.overhead) if p)

    @property
    def bound(self) -> str | None:
        """'compute', 'memory' or 'overhead': the largest measured part, or None if none was measured."""
        parts = {name: getattr(self, name) for name in BOUNDS if getattr(self, name) is not None}
        return max(parts, key=parts.get) if parts else None

    def parts(self) -> dict[str, float | None]:
        """The bar's segments in order, the rest last."""
        return {"compute": self.compute, "memory": self.memory, "overhead": self.overhead, "rest": self.rest}


def roof(device: str, info: dict) -> Roof:
    """A device's roofs from its device info (peak_gflops, bandwidth_gbs)."""
    return Roof(device, measured(info.get("peak_gflops")), measured(info.get("bandwidth_gbs")))


def epoch_breakdown(
    epoch_seconds: float,
    steps: int,
    batch_size: int,
    flops_per_sample: float,
    bytes_per_sample: float | None,
    peak_gflops: float | None,
    bandwidth_gbs: float | None,
    floor_seconds: float | None,
) -> Breakdown:
    """Split an epoch of `steps` steps into compute, memory and overhead by the roofline model."""
    flops = flops_per_sample * batch_size * steps
    moved = bytes_per_sample * batch_size * steps if bytes_per_sample else None
    return Breakdown(
        epoch_seconds=epoch_seconds,
        steps=steps,
        flops_per_step=flops_per_sample * batch_size,
        bytes_per_step=moved / steps if moved and steps else None,
        compute=flops / (peak_gflops * 1e9) if peak_gflops else None,
        memory=moved / (bandwidth_gbs * 1e9) if moved and bandwidth_gbs else None,
        overhead=floor_seconds * steps if floor_seconds else None,
        peak_gflops=peak_gflops,
        bandwidth_gbs=bandwidth_gbs,
    )


def bound_sentence(b: Breakdown) -> str:
    """'overhead-bound: 600 steps of 3.1 MFLOP; the step floor alone is 0.09 s of the 0.15 s epoch. A larger ...'"""
    kind = b.bound
    epoch = f"of the {seconds(b.epoch_seconds)} epoch"
    if kind == "overhead":
        said = f"{b.steps:,} steps of {si(b.flops_per_step, 'FLOP')}; the step floor alone is {seconds(b.overhead)} {epoch}"
    elif kind == "memory":
        moved = si(b.bytes_per_step * b.steps, "B")
        said = f"{moved} per epoch at {b.bandwidth_gbs:,.0f} GB/s take {seconds(b.memory)} {epoch}"
    elif kind == "compute":
        flops = si(b.flops_per_step, "FLOP")
        said = (
            f"{b.steps:,} steps of {flops} at the {b.peak_gflops:,.0f} GFLOP/s peak take {seconds(b.compute)} {epoch}"
        )
    else:
        return "No bound: the device's peak, bandwidth and step floor were not measured."
    return f"{kind}-bound: {said}. {ADVICE[kind]}"


def run_breakdown(result) -> Breakdown | None:
    """A RunResult's steady-state epoch split by the model; None before epoch 2 or for a run without the figures."""
    info, epoch = result.device, result.median_epoch_seconds()
    steps, flops = info.get("steps_per_epoch"), info.get("train_flops_per_sample")
    if not epoch or not steps or not flops:
        return None
    return epoch_breakdown(
        epoch,
        int(steps),
        int(result.config["batch_size"]),
        flops,
        measured(info.get("train_bytes_per_sample")),
        measured(info.get("peak_gflops")),
        measured(info.get("bandwidth_gbs")),
        measured(info.get("step_floor_seconds")),
    )


def run_point(result, device: str) -> Point | None:
    """A RunResult on the roofline (median of its steady epochs); None before epoch 2 or without its bytes."""
    info = result.device
    flops, moved = info.get("train_flops_per_sample"), measured(info.get("train_bytes_per_sample"))
    steady = [e.gflops_per_second for e in result.steady_epochs() if e.gflops_per_second]
    rate = result.median_samples_per_second()
    if not flops or not moved or not steady or not rate:
        return None
    config = result.config
    return Point(
        device, str(config.get("model")), int(config["batch_size"]), flops / moved, statistics.median(steady), rate
    )


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
        )  # fmt: skip
        for p in points
        if p.samples_per_second and p.gflops_per_second
    ]


def seconds(value: float | None) -> str:
    """'0.09 s', '1.2 s', '0.004 s'; 'not measured' for None."""
    if value is None:
        return "not measured"
    if abs(value) >= 1:
        return f"{value:.1f} s"
    return f"{value:.2f} s" if abs(value) >= 0.01 else f"{value:.1g} s"


def si(value: float, unit: str) -> str:
    """3.1e6, 'FLOP' -> '3.1 MFLOP'; 188e6, 'B' -> '188 MB'."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if abs(value) >= scale:
            v = value / scale
            return f"{v:.0f} {prefix}{unit}" if v >= 10 else f"{v:.1f} {prefix}{unit}"
    return f"{value:g} {unit}"


def measured(value) -> float | None:
    """A measured figure if it is a positive finite number, else None (not measured)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)
