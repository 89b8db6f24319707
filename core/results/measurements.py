"""What the engine measured beside a run's epochs, as it measured it: a typed, versioned record (RunResult.measured).

Raw figures only: the device's roofs, a throwaway copy of the step timed at other batch sizes, the layers' products
timed alone at the model's shapes, and a profiler trace's reading of a window of steps. What they mean (the line
through two steps, its prediction of a third, the floors, the bound) is derived on read by core.analysis.why, never
stored, so a stored file never freezes a day's formula. Runs written before schema version 4 kept these figures as loose
keys of their device info; from_device reads them back into this record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

MEASUREMENTS_VERSION = 1
# A trace's parts (core.engine.xspace): the ops by category, and the gaps between them by what the host was doing.
OPS = ("matmul", "elementwise", "loss", "optimizer", "input")
GAPS = ("python", "dispatch", "runtime", "launch", "sync")


@dataclass(frozen=True)
class Limits:
    """The device's roofs as the run was held against them: a matmul's peak and the memory's bandwidth."""

    peak_gflops: float | None = None
    peak_tries: tuple[float, ...] = ()
    peak_dtype: str | None = None
    peak_source: str | None = None  # "server" (the dashboard's hardware check) or "process" (this process's own)
    own_peak_gflops: float | None = None  # one quick try of the run's own, just before its figures were taken
    bandwidth_gbs: float | None = None
    bandwidth_tries: tuple[float, ...] = ()


@dataclass(frozen=True)
class StepTiming:
    """A throwaway copy of the run's step at one batch size: a short round timed just before each steady epoch."""

    batch: int
    rounds: tuple[float, ...] = ()  # each round's median seconds per step (its calls after its first)
    seconds: float | None = None  # the median call over every round


@dataclass(frozen=True)
class ShapeTiming:
    """The layers' products (core.engine.shapes) timed alone at the model's shapes, at two batch sizes."""

    batches: tuple[int, ...] = ()
    sample_seconds: float | None = None  # what a sample adds: the slope between the two batch sizes
    gflops: float | None = None  # the products' FLOPs per sample over that


@dataclass(frozen=True)
class TraceSummary:
    """A profiler trace of a window of the run's step (core.engine.trace), read by core.engine.xspace.

    Seconds are per step. ops (by core.engine.xspace.OPS) and gaps (by GAPS) partition the trace's step.
    """

    steps: int
    calls: int
    batch: int
    step_seconds: float  # the trace's own clock: first call end to last, over the steps
    timer_step_seconds: float  # the same traced window by the host's perf_counter
    untraced_step_seconds: float  # the same copy's window just before, not traced: what tracing costs a step
    ops: dict[str, float] = field(default_factory=dict)
    gaps: dict[str, float] = field(default_factory=dict)
    gpu: bool = False  # the ops were read from a GPU's planes (else the host's threads)
    cost_seconds: float = 0.0  # wall clock the whole tracing took: the copy, its windows, the profiler, the reading
    file_bytes: int = 0  # the XSpace file's size
    slices: tuple[dict[str, float], ...] = ()  # the window cut in equal times, each slice's seconds by OPS and GAPS


@dataclass(frozen=True)
class Measurements:
    """Everything a run measured beyond its epochs (see the module docstring); a part not measured is None."""

    version: int = MEASUREMENTS_VERSION
    limits: Limits | None = None
    fit: StepTiming | None = None  # the line's second point: the run's own steady steps are its first
    check: StepTiming | None = None  # a third batch size the line is not fitted on: its prediction's test
    shapes: ShapeTiming | None = None
    trace: TraceSummary | None = None
    trace_error: str | None = None  # why no window was traced, where none was
    setup_seconds: float | None = None  # what the set-up's measurements took, once, after epoch 1
    round_seconds: float = 0.0  # what the rounds beside the steady epochs took, in all

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON: tuples as lists, as a file read back holds them."""
        return _lists(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Measurements:
        """Rebuild from to_dict() output; core.history checks an untrusted file's first."""
        parts = {"limits": Limits, "fit": StepTiming, "check": StepTiming, "shapes": ShapeTiming, "trace": TraceSummary}
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        for name, part in parts.items():
            if isinstance(given.get(name), dict):
                given[name] = _build(part, given[name])
        return cls(**given)

    @classmethod
    def from_device(cls, device: dict[str, Any]) -> Measurements | None:
        """A schema version 1-3 run's loose device keys as this record; None where it measured none of them."""
        limits = Limits(**{k: _tuple(device[k]) for k in _fields(Limits) if k in device})
        fit = None
        if device.get("profile_batch"):
            rounds = tuple(device.get("profile_rounds") or ())
            fit = StepTiming(int(device["profile_batch"]), rounds, device.get("profile_seconds"))
        shapes = None
        if "compute_sample_seconds" in device or "shape_gflops" in device:
            shapes = ShapeTiming((), device.get("compute_sample_seconds"), device.get("shape_gflops"))
        if limits == Limits() and fit is None and shapes is None:
            return None
        return cls(
            limits=limits if limits != Limits() else None,
            fit=fit,
            shapes=shapes,
            setup_seconds=device.get("why_setup_seconds"),
            round_seconds=device.get("why_round_seconds") or 0.0,
        )


def _lists(value):
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return [_lists(v) for v in value] if isinstance(value, (list, tuple)) else value


def _fields(cls) -> list[str]:
    return [f.name for f in fields(cls)]


def _tuple(value):
    return tuple(value) if isinstance(value, list) else value


def _build(cls, data: dict[str, Any]):
    return cls(**{k: _tuple(v) for k, v in data.items() if k in _fields(cls)})
