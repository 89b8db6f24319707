"""RunResult and EpochMetrics: what a run measured, as JSON (with a schema version) and pandas."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

SCHEMA_VERSION = 1


def utc_now() -> str:
    """The timestamp format of every result and history row: ISO 8601, UTC, milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


STATUSES = ("running", "completed", "cancelled", "failed", "interrupted")


@dataclass(frozen=True)
class EpochMetrics:
    """One finished epoch. Seconds are wall clock around finished work (results fetched)."""

    epoch: int
    train_loss: float
    train_accuracy: float
    test_loss: float
    test_accuracy: float
    train_seconds: float
    eval_seconds: float
    samples_per_second: float
    warmup: bool
    # Achieved training GFLOP/s (model FLOPs per sample x samples/s); None where unknown.
    gflops_per_second: float | None = None


@dataclass
class RunResult:
    """A run: its config, where it ran, its status and its finished epochs."""

    config: dict[str, Any]
    host: dict[str, Any]
    device: dict[str, Any]
    status: str = "running"
    error: str | None = None
    epochs: list[EpochMetrics] = field(default_factory=list)
    started_at: str | None = None
    finished_at: str | None = None
    run_id: str | None = None
    schema_version: int = SCHEMA_VERSION

    # -- summaries ---------------------------------------------------------
    def steady_epochs(self) -> list[EpochMetrics]:
        """Epochs 2..N: epoch 1 includes tracing and compilation."""
        return [e for e in self.epochs if not e.warmup]

    def median_epoch_seconds(self) -> float | None:
        """Median steady-state training seconds per epoch (None before epoch 2 finishes)."""
        steady = self.steady_epochs()
        return statistics.median(e.train_seconds for e in steady) if steady else None

    def warmup_seconds(self) -> float | None:
        """Extra seconds epoch 1 took over a steady epoch: the cost of tracing and compiling."""
        median = self.median_epoch_seconds()
        first = next((e for e in self.epochs if e.warmup), None)
        if first is None or median is None:
            return None
        return first.train_seconds - median

    def median_samples_per_second(self) -> float | None:
        """Median steady-state training throughput."""
        steady = self.steady_epochs()
        return statistics.median(e.samples_per_second for e in steady) if steady else None

    def final_test_accuracy(self) -> float | None:
        return self.epochs[-1].test_accuracy if self.epochs else None

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain dict in the file format: schema_version first, epochs last."""
        data = asdict(self)
        ordered = {"schema_version": data.pop("schema_version")}
        ordered.update(data)
        ordered["epochs"] = ordered.pop("epochs")
        return ordered

    def to_json(self, indent: int | None = 2) -> str:
        """The run as JSON text (the CLI's --json format)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """Rebuild from to_dict() output; the importer validates untrusted files first."""
        epochs = [EpochMetrics(**e) for e in data.get("epochs", [])]
        keys = {"config", "host", "device", "status", "error", "started_at", "finished_at", "run_id", "schema_version"}
        return cls(epochs=epochs, **{k: data[k] for k in keys if k in data})

    def to_frame(self):
        """One row per epoch, with the run's device and label; pandas imported lazily."""
        import pandas as pd

        rows = [asdict(e) for e in self.epochs]
        frame = pd.DataFrame(rows, columns=[f for f in EpochMetrics.__dataclass_fields__])
        frame.insert(0, "device", self.device.get("label") or self.config.get("device"))
        frame.insert(1, "run_id", self.run_id)
        return frame


def speedup(baseline: RunResult, other: RunResult) -> float | None:
    """How many times faster `other` trains than `baseline`, from median steady-state epochs."""
    a, b = baseline.median_epoch_seconds(), other.median_epoch_seconds()
    if not a or not b:
        return None
    return a / b


def speedup_sentence(baseline: RunResult, other: RunResult, base_name: str, other_name: str) -> str:
    """'GPU is 4.2x faster than CPU' or '... slower ...', from median steady-state epoch times."""
    ratio = speedup(baseline, other)
    if ratio is None:
        return "Speedup needs at least two finished epochs on each device (epoch 1 is warm-up)."
    if ratio >= 1:
        return f"{other_name} is {ratio:.1f}× faster than {base_name} (median of epochs 2+)."
    return f"{other_name} is {1 / ratio:.1f}× slower than {base_name} (median of epochs 2+)."
