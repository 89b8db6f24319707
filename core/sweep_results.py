"""SweepPoint and SweepResult: what a batch-size sweep measured, as JSON, pandas and one sentence.

The file format (SWEEP_SCHEMA_VERSION 1); `kind: "sweep"` tells it from a training run's file,
which has no `kind`:

    {"schema_version": 1, "kind": "sweep", "run_id": ..., "status": "completed", "error": null,
     "started_at": ..., "finished_at": ...,
     "config":  SweepConfig.to_dict(),
     "model":   {"name", "hidden_units", "parameters", "train_flops_per_sample", "forward_flops_per_sample"},
     "host":    HostInfo.to_dict(),
     "devices": {"cpu": {"requested", "tf_device", "name", "label", "variables_on", "peak_gflops",
                         "peak_matrix_size"}, ...},
     "crossover": "GPU faster from batch 256.",
     "points":  [SweepPoint as a dict, ...]}   # in the order measured: device by device, batch sizes ascending

This module imports neither TensorFlow nor pandas at load time, so a page can use it freely.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from core.sweep_config import SWEEP_KIND

SWEEP_SCHEMA_VERSION = 1
STATUSES = ("running", "completed", "cancelled", "failed", "interrupted")


class SweepFileError(ValueError):
    """A sweep file or dict was refused; the message is one sentence naming the problem."""


@dataclass(frozen=True)
class SweepPoint:
    """One device at one batch size: steady-state training throughput over `repeats` timed repeats."""

    device: str  # as configured: 'cpu', 'gpu', 'gpu:1'
    batch_size: int
    steps: int  # timed optimizer steps per repeat (0 where the point failed)
    samples_per_second: float | None  # median over repeats; None if the point failed
    samples_per_second_min: float | None
    samples_per_second_max: float | None
    samples_per_second_repeats: tuple[float, ...] = ()
    step_ms: float | None = None  # median milliseconds per optimizer step
    gflops_per_second: float | None = None  # median achieved training GFLOP/s
    utilisation: float | None = None  # achieved / the device's matmul peak, a fraction
    compile_seconds: float | None = None  # the first call: tracing (and XLA compiling) plus one step
    warmup_seconds: float | None = None  # untimed steps run after that, before the repeats
    error: str | None = None  # e.g. out of memory at this batch size

    @property
    def label(self) -> str:
        """'CPU', 'GPU', 'GPU:1'."""
        return self.device.upper()

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        data = asdict(self)
        data["samples_per_second_repeats"] = list(self.samples_per_second_repeats)
        return data


@dataclass
class SweepResult:
    """A sweep: its config, the model's FLOPs, each device's peak, and the points measured so far."""

    config: dict[str, Any]
    host: dict[str, Any] = field(default_factory=dict)
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    points: list[SweepPoint] = field(default_factory=list)
    status: str = "running"
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    run_id: str | None = None
    schema_version: int = SWEEP_SCHEMA_VERSION
    kind: str = SWEEP_KIND

    def crossover(self) -> str:
        """The crossover in words, from the points measured so far."""
        return crossover_sentence(self.points)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict in the file format (see the module docstring)."""
        return {
            "schema_version": self.schema_version,
            "kind": SWEEP_KIND,
            "run_id": self.run_id,
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "config": self.config,
            "model": self.model,
            "host": self.host,
            "devices": self.devices,
            "crossover": self.crossover(),
            "points": [p.to_dict() for p in self.points],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The sweep as JSON text (the CLI's --json format)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> SweepResult:
        """Rebuild from to_dict() output, checking every field; raises SweepFileError (or ConfigError) in one sentence."""
        from core.history.sweep_checks import check_sweep  # it builds SweepResults: imported here, not at load

        return check_sweep(data)

    def to_frame(self):
        """One row per point (see points_frame)."""
        return points_frame(self.points)


def points_frame(points: Iterable[SweepPoint]):
    """One row per point: device, label, batch_size, samples_per_second (median), min, max, GFLOP/s, utilisation."""
    import pandas as pd

    columns = ["device", "label"] + [f.name for f in fields(SweepPoint) if f.name != "device"]
    rows = [{"label": p.label, **p.to_dict()} for p in points]
    return pd.DataFrame(rows, columns=columns)


# -- the crossover in words -------------------------------------------------------------------
def _batches(values: list[int]) -> str:
    text = [str(v) for v in values]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]


def _pair_sentence(base: str, other: str, base_rates: dict[int, float], other_rates: dict[int, float]) -> str:
    b, o = base.upper(), other.upper()
    common = sorted(set(base_rates) & set(other_rates))
    if not common:
        return f"No batch size was measured on both {b} and {o}."
    faster = [n for n in common if other_rates[n] > base_rates[n]]
    slower = [n for n in common if n not in faster]
    if not slower:
        span = (
            f"batch {common[0]}"
            if len(common) == 1
            else f"every batch size in this range ({common[0]} to {common[-1]})"
        )
        return f"{o} faster at {span}."
    if not faster:
        return f"No crossover in this range ({b} faster at every batch size)."
    flags = [n in faster for n in common]
    switches = sum(1 for i in range(1, len(flags)) if flags[i] != flags[i - 1])
    if switches == 1 and flags[-1]:
        return f"{o} faster from batch {faster[0]}."
    if switches == 1:
        return f"{o} faster up to batch {faster[-1]}; {b} faster from batch {slower[0]}."
    return f"No clean crossover: {o} faster at batch {_batches(faster)}, {b} at {_batches(slower)}."


def crossover_sentence(points: Iterable[SweepPoint]) -> str:
    """Where each device overtakes the baseline (the first CPU), by median samples/s: 'GPU faster from batch 256.'"""
    rates: dict[str, dict[int, float]] = {}
    for p in points:
        rates.setdefault(p.device, {})
        if p.samples_per_second:
            rates[p.device][p.batch_size] = p.samples_per_second
    if len(rates) < 2:
        return "A crossover needs two devices measured, e.g. cpu and gpu."
    base = next((d for d in rates if d.startswith("cpu")), next(iter(rates)))
    return " ".join(_pair_sentence(base, d, rates[base], rates[d]) for d in rates if d != base)
