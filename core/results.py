"""What a job measured: a training run (RunResult of EpochMetrics) or a batch-size sweep (SweepResult of SweepPoints).

As JSON (with a schema version) and pandas; neither TensorFlow nor pandas is imported at load. The file
defines both result files' formats, which the history's schemas, checks and every importer name; comparing
runs (the speedup, the crossover, in words) is in core.compare.
A sweep's file format (SWEEP_SCHEMA_VERSION 1); `kind: "sweep"` tells it from a training run's file,
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
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from core.config import SWEEP_KIND

# A training run's file format. 2 added each epoch's calls (the race against the clock) and learned (what the
# model learned); 3 the config's precision (a Keras dtype policy) and xla, and the device's compute_dtype and
# peak_dtype. A version 1 run (read from an older file or history) is written back as version 1.
SCHEMA_VERSION = 3
V2_EPOCH_FIELDS = ("calls", "learned")
MAX_CALLS_PER_EPOCH = 200  # an epoch with more calls records neighbouring ones merged (core.engine.timeline)
MAX_STRIP = 32  # test images in Learned's strip


def utc_now() -> str:
    """The timestamp format of every result and history row: ISO 8601, UTC, milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


STATUSES = ("running", "completed", "cancelled", "failed", "interrupted")
# Optional fields of a run's `device` (schema version 2, checked where present): on a Ray node, the node's name
# as a device string says it and its Ray node id (the host info is the node's own); with gpu:all or cpu:all,
# MirroredStrategy's replicas and the global batch (batch_size x replicas). A run here has replicas 1.
CLUSTER_DEVICE_FIELDS = ("node", "node_id", "replicas", "global_batch_size")


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

    def __post_init__(self) -> None:
        # Read back from JSON (the history, a file) these arrive as plain dicts.
        object.__setattr__(self, "calls", [c if isinstance(c, CallPoint) else CallPoint(**c) for c in self.calls])
        if isinstance(self.learned, dict):
            object.__setattr__(self, "learned", Learned(**self.learned))


@dataclass(frozen=True)
class EpochInProgress:
    """An epoch still training: its calls of the step loop so far. Live only (the page's race against the clock
    moves within a long epoch); never stored, since Stop may yet discard the epoch."""

    epoch: int
    calls: tuple[CallPoint, ...]


# An epoch's columns in a table or CSV: its numbers, not its calls or snapshot (version 1's fields).
EPOCH_COLUMNS = tuple(f.name for f in fields(EpochMetrics) if f.name not in V2_EPOCH_FIELDS)


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

    def final_test_accuracy(self) -> float | None:
        """The last finished epoch's test accuracy."""
        return self.epochs[-1].test_accuracy if self.epochs else None

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain dict in the file format: schema_version first, epochs last."""
        data = asdict(self)
        if self.schema_version < 2:  # an older run is written in its own version's format
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
        return cls(epochs=epochs, **{k: data[k] for k in keys if k in data})

    def to_frame(self):
        """One row per epoch, with the run's device and label; pandas imported lazily."""
        import pandas as pd

        rows = [{k: getattr(e, k) for k in EPOCH_COLUMNS} for e in self.epochs]
        frame = pd.DataFrame(rows, columns=list(EPOCH_COLUMNS))
        frame.insert(0, "device", self.device.get("label") or self.config.get("device"))
        frame.insert(1, "run_id", self.run_id)
        return frame


# -- batch-size sweeps ----------------------------------------------------------------------


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
    status: str = "running"
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    run_id: str | None = None
    schema_version: int = SWEEP_SCHEMA_VERSION
    kind: str = SWEEP_KIND
    # Where each device overtakes the first, in words (core.crossover, from the points): set by
    # the sweep as it measures and by core.history's checks as a file is read, never taken from a file as written.
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
            "crossover": self.crossover,
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
