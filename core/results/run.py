"""A training run's result: a RunResult of EpochMetrics (each with its calls), as JSON with a schema version and pandas.

Neither TensorFlow nor pandas is imported at load. What the engine measured beside the epochs is
core.results.measurements; comparing runs (the speedup, the why, in words) is above this, in core.analysis.compare and
core.analysis.why.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import Any

from core.results.measurements import Measurements
from core.results.states import ENDED, State

# A training run's file format. 2 added each epoch's calls (the race against the clock) and learned (what the
# model learned); 3 the config's precision (a Keras dtype policy) and xla, and the device's compute_dtype and
# peak_dtype; 4 the engine's measurements as a typed record (core.results.measurements), out of the device info. A
# version 1-3 run (read from an older file or history) is written back in its own version's format.
SCHEMA_VERSION = 4
V2_EPOCH_FIELDS = ("calls", "learned")
V4_EPOCH_FIELDS = ("others_cores",)
MAX_CALLS_PER_EPOCH = 200  # an epoch with more calls records neighbouring ones merged (core.engine.timeline)
MAX_STRIP = 32  # test images in Learned's strip


def utc_now() -> str:
    """The timestamp format of every result and history row: ISO 8601, UTC, milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


STATUSES = (State.RUNNING, *ENDED)


@dataclass(frozen=True)
class CallPoint:
    """One call of the step loop (about 0.2 s; for model.fit, its executions over about that long), seen on the host.

    seconds: training seconds of the run so far (every epoch's timed training, evaluation excluded) when
    this call's results had reached the host, so the device had finished its work; samples: samples trained
    on so far in the run; steps, call_seconds: optimizer steps since the previous point and the wall-clock
    seconds they took; train_loss, train_accuracy: running means over the epoch so far.
    """

    seconds: float
    samples: int
    steps: int
    call_seconds: float
    train_loss: float
    train_accuracy: float

    @property
    def step_seconds(self) -> float:
        """Seconds per optimizer step in this call."""
        return self.call_seconds / self.steps


@dataclass(frozen=True)
class Learned:
    """What the model had learned at an epoch's end: a fixed strip of test images and, for softmax, its templates."""

    indices: list[int]  # the strip: rows of the dataset's test set (the images are there)
    labels: list[int]  # their true labels
    predictions: list[int]  # the model's predicted labels
    # The softmax model's 10 weight templates (one per class, 784 = 28x28 each) as 0..255, 128 = weight 0:
    # round(127.5 + 127.5 * w / template_scale). None for the other models.
    templates: list[list[int]] | None = None
    template_scale: float | None = None  # the largest |weight|: 0 stands for -scale, 255 for +scale


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
    # Schema version 2: the epoch's calls of the step loop, in order, and what the model learned by its end
    # (a run keeps it on its last epoch only, so a file stays small).
    calls: list[CallPoint] = field(default_factory=list, hash=False)
    learned: Learned | None = field(default=None, hash=False)
    # Schema version 4: the cores the rest of the machine used on average while it trained (core.engine.load).
    others_cores: float | None = None

    def __post_init__(self) -> None:
        # Read back from JSON (the history, a file) these arrive as plain dicts.
        object.__setattr__(self, "calls", [c if isinstance(c, CallPoint) else CallPoint(**c) for c in self.calls])
        if isinstance(self.learned, dict):
            object.__setattr__(self, "learned", Learned(**self.learned))


@dataclass(frozen=True)
class EpochInProgress:
    """An epoch still training: its calls of the step loop so far. Live only (the page's race against the clock
    moves within a long epoch); never stored, since Stop may yet discard the epoch. `measuring`: before the epoch's
    first call, the run measures its step (core.engine.measure), which takes seconds of its own."""

    epoch: int
    calls: tuple[CallPoint, ...]
    measuring: bool = False


# An epoch's columns in a table or CSV: its numbers, not its calls or snapshot (version 1's fields).
EPOCH_COLUMNS = tuple(f.name for f in fields(EpochMetrics) if f.name not in V2_EPOCH_FIELDS + V4_EPOCH_FIELDS)


@dataclass
class RunResult:
    """A run: its config, where it ran, its status and its finished epochs."""

    config: dict[str, Any]
    host: dict[str, Any]
    device: dict[str, Any]
    status: str = State.RUNNING
    error: str | None = None
    epochs: list[EpochMetrics] = field(default_factory=list)
    started_at: str | None = None
    finished_at: str | None = None
    run_id: str | None = None
    schema_version: int = SCHEMA_VERSION
    # What the engine measured beside the epochs; a version 1-3 run's comes from its device info's loose keys.
    measured: Measurements | None = None
    # The profiler's trace of a window of its step (an XSpace, gzipped): kept beside the file, never in its JSON.
    trace: bytes | None = field(default=None, repr=False, compare=False)

    # -- summaries ---------------------------------------------------------
    def steady_epochs(self) -> list[EpochMetrics]:
        """Epochs 2..N: epoch 1 includes tracing and compilation."""
        return [e for e in self.epochs if not e.warmup]

    def final_test_accuracy(self) -> float | None:
        """The last finished epoch's test accuracy."""
        return self.epochs[-1].test_accuracy if self.epochs else None

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain dict in the file format: schema_version first, epochs last."""
        data = asdict(replace(self, trace=None, measured=None))
        del data["trace"]
        data["measured"] = self.measured.to_dict() if self.measured else None
        if self.schema_version < 4:  # an older run is written in its own version's format
            del data["measured"]
            data["epochs"] = [{k: v for k, v in e.items() if k not in V4_EPOCH_FIELDS} for e in data["epochs"]]
        if self.schema_version < 2:
            data["epochs"] = [{k: v for k, v in e.items() if k not in V2_EPOCH_FIELDS} for e in data["epochs"]]
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
        given = data.get("measured")
        measured = Measurements.from_dict(given) if given else Measurements.from_device(data.get("device") or {})
        return cls(epochs=epochs, measured=measured, **{k: data[k] for k in keys if k in data})

    def to_frame(self):
        """One row per epoch, with the run's device and label; pandas imported lazily."""
        import pandas as pd

        rows = [{k: getattr(e, k) for k in EPOCH_COLUMNS} for e in self.epochs]
        frame = pd.DataFrame(rows, columns=list(EPOCH_COLUMNS))
        frame.insert(0, "device", self.device.get("label") or self.config.get("device"))
        frame.insert(1, "run_id", self.run_id)
        return frame


# The steady epoch and elapsed time are the run's own sums, read by the history's rows and every analysis.
def mean_epoch(seconds: Sequence[float]) -> float | None:
    """The mean of these steady epochs' training seconds (STEADY_EPOCH in core.analysis.compare); None for none."""
    return sum(seconds) / len(seconds) if seconds else None


def steady_epoch_seconds(result: RunResult) -> float | None:
    """The run's steady epoch: the mean of epochs 2+'s training seconds, in the ratio of throughput."""
    return mean_epoch([e.train_seconds for e in result.steady_epochs()])


def elapsed_seconds(result: RunResult) -> list[float]:
    """Training seconds at each epoch's end, summed from epoch 1 (its compiling included, evaluation excluded)."""
    return list(itertools.accumulate(e.train_seconds for e in result.epochs))
