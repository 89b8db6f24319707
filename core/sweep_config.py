"""SweepConfig: what one batch-size sweep is, validated once where it is built.

Light to import (no TensorFlow), so a page can build and check one before anything runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

# config's own validators, so a sweep's field errors read like a training run's.
from core.config import DATASETS, MAX_BATCH, MAX_HIDDEN, MAX_SEED, MODELS, ConfigError, normalize_device
from core.config import _choice as choice
from core.config import _int as whole

SWEEP_KIND = "sweep"  # a sweep file's "kind"; a training run's file has none
DEFAULT_BATCH_SIZES = (16, 64, 256, 1024, 4096)
MAX_DEVICES = 8
MAX_BATCH_SIZES = 16
MAX_STEPS = 100_000
MAX_REPEATS = 50


def _devices(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not 1 <= len(items) <= MAX_DEVICES:
        raise ConfigError("devices", f"devices must list 1 to {MAX_DEVICES} devices, such as cpu,gpu, not {value!r}.")
    names = []
    for item in items:
        try:
            names.append(normalize_device(item))
        except ConfigError:
            raise ConfigError("devices", f"devices must each be cpu, gpu, gpu:N or cpu:N, not {item!r}.") from None
    canonical = [n if ":" in n else f"{n}:0" for n in names]  # 'gpu' is 'gpu:0'
    for i, name in enumerate(canonical):
        if name in canonical[:i]:
            raise ConfigError("devices", f"devices lists {names[i]} twice.")
    return tuple(names)


def _batch_sizes(value: Any) -> tuple[int, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not 1 <= len(items) <= MAX_BATCH_SIZES:
        raise ConfigError("batch_sizes", f"batch_sizes must list 1 to {MAX_BATCH_SIZES} batch sizes, not {value!r}.")
    sizes = []
    for item in items:
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item)
        sizes.append(whole("batch_sizes", item, 1, MAX_BATCH, " for each batch size"))
    return tuple(sorted(set(sizes)))


@dataclass(frozen=True)
class SweepConfig:
    """A sweep's settings: every device times every batch size. Built only through validation."""

    devices: tuple[str, ...] = ("cpu",)
    model: str = "softmax"
    batch_sizes: tuple[int, ...] = DEFAULT_BATCH_SIZES
    steps: int | None = None  # timed optimizer steps per repeat; None = auto (core.engine.sweep.REPEAT_SECONDS)
    repeats: int = 3
    hidden_units: int = 128  # MLP width: the model-size control
    dataset: str = "synthetic"
    seed: int = 0

    kind: ClassVar[str] = SWEEP_KIND
    progress_unit: ClassVar[str] = "point"  # the runner reports "point 3 of 10" and emits "point" events

    def __post_init__(self) -> None:
        object.__setattr__(self, "devices", _devices(self.devices))
        choice("model", self.model, MODELS)
        object.__setattr__(self, "batch_sizes", _batch_sizes(self.batch_sizes))
        if self.steps is not None:
            object.__setattr__(self, "steps", whole("steps", self.steps, 1, MAX_STEPS, " (or none, for auto)"))
        object.__setattr__(self, "repeats", whole("repeats", self.repeats, 1, MAX_REPEATS))
        object.__setattr__(self, "hidden_units", whole("hidden_units", self.hidden_units, 1, MAX_HIDDEN))
        choice("dataset", self.dataset, DATASETS)
        object.__setattr__(self, "seed", whole("seed", self.seed, 0, MAX_SEED))

    @property
    def progress_total(self) -> int:
        """Points in the sweep: devices x batch sizes."""
        return len(self.devices) * len(self.batch_sizes)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Any) -> SweepConfig:
        """Build from a dict (e.g. an imported file); unknown keys are errors."""
        if not isinstance(data, dict):
            raise ConfigError("config", "config must be an object with the sweep's settings.")
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise ConfigError(unknown[0], f"config has an unknown field {unknown[0]!r}.")
        return cls(**data)
