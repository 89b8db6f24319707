"""TrainConfig: what one training run is, validated once where it is built."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from typing import Any

DATASETS = ("mnist", "fashion_mnist", "synthetic")
MODELS = ("softmax", "mlp", "cnn")
OPTIMIZERS = ("sgd", "adam")
EXECUTIONS = ("fast", "keras-default")

# Training-set sizes, known without loading anything, so a batch size can be
# checked against them when the config is built. Synthetic data is generated at
# the size asked for (train_subset), 60,000 by default like the real datasets.
TRAIN_SIZES = {"mnist": 60_000, "fashion_mnist": 60_000, "synthetic": 60_000}

MAX_EPOCHS = 1000
MAX_BATCH = 65_536
MAX_LEARNING_RATE = 10.0
MAX_SEED = 2**31 - 1
MIN_SUBSET = 10
MAX_SYNTHETIC = 1_000_000
MAX_HIDDEN = 16_384

_DEVICE_RE = re.compile(r"^(cpu|gpu)(?::(\d{1,3}))?$")


class ConfigError(ValueError):
    """A setting is out of range; the message names the field and what is allowed."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def normalize_device(value: Any) -> str:
    """'GPU' -> 'gpu', ' cpu:1 ' -> 'cpu:1'; raise ConfigError for anything else."""
    text = str(value).strip().lower() if isinstance(value, str) else None
    match = _DEVICE_RE.match(text or "")
    if not match:
        raise ConfigError(
            "device",
            f"device must be cpu, gpu, gpu:N or cpu:N (N a device number), not {value!r}.",
        )
    kind, index = match.groups()
    return kind if index is None else f"{kind}:{int(index)}"


def _int(field: str, value: Any, low: int, high: int, extra: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(field, f"{field} must be a whole number from {low} to {high}{extra}, not {value!r}.")
    if not low <= value <= high:
        raise ConfigError(field, f"{field} must be from {low} to {high}{extra}, not {value}.")
    return value


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(field, f"{field} must be one of {', '.join(allowed)}, not {value!r}.")
    return value


@dataclass(frozen=True)
class TrainConfig:
    """One training run's settings. Built only through validation; trusted downstream."""

    dataset: str = "fashion_mnist"
    model: str = "softmax"
    device: str = "cpu"
    epochs: int = 10
    batch_size: int = 100
    learning_rate: float = 0.1
    optimizer: str = "sgd"
    seed: int = 0
    execution: str = "fast"
    train_subset: int | None = None
    hidden_units: int = 128

    def __post_init__(self) -> None:
        _choice("dataset", self.dataset, DATASETS)
        _choice("model", self.model, MODELS)
        object.__setattr__(self, "device", normalize_device(self.device))
        object.__setattr__(self, "epochs", _int("epochs", self.epochs, 1, MAX_EPOCHS))
        _choice("optimizer", self.optimizer, OPTIMIZERS)
        _choice("execution", self.execution, EXECUTIONS)
        object.__setattr__(self, "seed", _int("seed", self.seed, 0, MAX_SEED))
        object.__setattr__(self, "hidden_units", _int("hidden_units", self.hidden_units, 1, MAX_HIDDEN))

        lr = self.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr):
            raise ConfigError(
                "learning_rate", f"learning_rate must be a finite number above 0 and at most 10, not {lr!r}."
            )
        if not 0 < lr <= MAX_LEARNING_RATE:
            raise ConfigError("learning_rate", f"learning_rate must be above 0 and at most 10, not {lr}.")
        object.__setattr__(self, "learning_rate", float(lr))

        full = TRAIN_SIZES[self.dataset]
        if self.train_subset is not None:
            high = MAX_SYNTHETIC if self.dataset == "synthetic" else full
            object.__setattr__(
                self,
                "train_subset",
                _int("train_subset", self.train_subset, MIN_SUBSET, high, f" for {self.dataset}"),
            )
        n_train = self.train_size
        _int("batch_size", self.batch_size, 1, min(MAX_BATCH, n_train), f" (the training set has {n_train:,} samples)")
        object.__setattr__(self, "batch_size", int(self.batch_size))

    @property
    def train_size(self) -> int:
        """Number of training samples this run uses."""
        return self.train_subset or TRAIN_SIZES[self.dataset]

    @property
    def steps_per_epoch(self) -> int:
        """Optimizer steps per epoch; a last partial batch is dropped, as in the tutorial."""
        return self.train_size // self.batch_size

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> TrainConfig:
        """Build from a dict (e.g. an imported file); unknown or missing keys are errors."""
        if not isinstance(data, dict):
            raise ConfigError("config", "config must be an object with the run's settings.")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(unknown[0], f"config has an unknown field {unknown[0]!r}.")
        return cls(**data)
