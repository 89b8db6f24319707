"""A batch-size sweep's result: SweepPoints (one device at one batch size), as JSON with a schema version and pandas.

A sweep's file format (SWEEP_SCHEMA_VERSION 1); `kind: "sweep"` tells it from a training run's file,
which has no `kind`:

    {"schema_version": 1, "kind": "sweep", "run_id": ..., "status": "completed", "error": null,
     "started_at": ..., "finished_at": ...,
     "config":  SweepConfig.to_dict(),
     "model":   {"name", "hidden_units", "parameters", "train_flops_per_sample", "forward_flops_per_sample"},
     "host":    HostInfo.to_dict(),
     "devices": {"cpu": {"requested", "tf_device", "name", "label", "variables_on", "peak_gflops",
                         "peak_matrix_size"}, ...},
     "points":  [SweepPoint as a dict, ...]}   # in the order measured: device by device, batch sizes ascending
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from core.results.states import State
from core.settings.config import SWEEP_KIND

SWEEP_SCHEMA_VERSION = 1


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
    status: str = State.RUNNING
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    run_id: str | None = None
    schema_version: int = SWEEP_SCHEMA_VERSION
    kind: str = SWEEP_KIND
    # Where each device overtakes the first, in words (core.results.crossover, from the points): derived on read, set by
    # core.history's checks as a file or row is read, never taken from a file as written; None as the engine writes it.
    crossover: str | None = None

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
            # Only where it was read (derived from the points): a stored sweep exports as it always has.
            **({"crossover": self.crossover} if self.crossover is not None else {}),
            "points": [p.to_dict() for p in self.points],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The sweep as JSON text (the CLI's --json format)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepResult:
        """Rebuild from to_dict() output; core.history checks an untrusted document first."""
        points = [
            SweepPoint(**{**p, "samples_per_second_repeats": tuple(p.get("samples_per_second_repeats") or ())})
            for p in data.get("points", [])
        ]
        keys = ("config", "host", "devices", "model", "status", "error", "started_at", "finished_at", "run_id")
        return cls(points=points, **{k: data[k] for k in keys if k in data})

    def to_frame(self):
        """One row per point (see points_frame)."""
        return points_frame(self.points)


def points_frame(points: Iterable[SweepPoint]):
    """One row per point: device, label, batch_size, samples_per_second (median), min, max, GFLOP/s, utilisation."""
    import pandas as pd

    columns = ["device", "label"] + [f.name for f in fields(SweepPoint) if f.name != "device"]
    rows = [{"label": p.label, **p.to_dict()} for p in points]
    return pd.DataFrame(rows, columns=columns)
