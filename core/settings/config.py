"""TrainConfig and SweepConfig: what one training run or one batch-size sweep is, validated once where built.

Light to import (no TensorFlow), so a page can build and check one before anything runs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from core.language.i18n import N_, _
from core.machine.device_spec import DeviceSpec, device_name, parse_device_name

DATASETS = ("mnist", "fashion_mnist", "synthetic")
MODELS = ("softmax", "mlp", "cnn")
OPTIMIZERS = ("sgd", "adam")
# Execution modes, in Keras' words: "keras-fit" is compile + fit as most code is written;
# "keras-fit-spe" the same with compile(steps_per_execution=N), Keras' own answer to per-step
# overhead; "multi-step-loop" this project's loop of many optimizer steps in one tf.function.
EXECUTIONS = ("keras-fit", "keras-fit-spe", "multi-step-loop")
# Names older versions wrote: read as the new name (a stored file keeps its own words), so old runs still import.
EXECUTION_ALIASES = {"fast": "multi-step-loop", "keras-default": "keras-fit"}
# Keras 3 dtype policies (keras.DTypePolicy names), set per layer: float32 throughout, or computing in
# float16 / bfloat16 with float32 variables.
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
# XLA (Keras' jit_compile): "auto" resolves per device backend (core.machine.backends), "on" and "off" as said.
XLA_CHOICES = ("auto", "on", "off")
# Where auto turns XLA on for a CPU: one XLA program per call, measured faster only there (bench/precision_xla.py).
XLA_ON_CPU: dict[str, frozenset[str]] = {"multi-step-loop": frozenset({"softmax", "mlp"})}
# auto's one rule, said the same in the CLI's help, the page's and the README (tests/test_xla_rule.py).
XLA_AUTO_RULE = N_(
    "auto: on for a GPU that XLA compiles for (NVIDIA's CUDA; not Apple's Metal); on a CPU only for the multi-step "
    "loop of the softmax and the MLP, where it measured faster; off for everything else"
)

# Training-set sizes, known without loading anything, so a batch size is checked where the config is built.
TRAIN_SIZES = {"mnist": 60_000, "fashion_mnist": 60_000, "synthetic": 60_000}

MAX_EPOCHS = 1000
MAX_BATCH = 65_536
MAX_LEARNING_RATE = 10.0
MAX_SEED = 2**31 - 1
MIN_SUBSET = 10
MAX_SYNTHETIC = 1_000_000
MAX_HIDDEN = 16_384

DEVICE_FORMS = N_("cpu, gpu, gpu:N, cpu:N, gpu:all or cpu:all, optionally after NODE/ for a Ray node")


class ConfigError(ValueError):
    """A setting is out of range; the message names the field and what is allowed."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def refused(field: str, sentence: str, /, **values: Any) -> ConfigError:
    """The ConfigError saying `sentence` (marked N_) in the page's language (the CLI's: English), values filled in."""
    return ConfigError(field, _(sentence).format(**values))


def parse_device(value: Any) -> DeviceSpec:
    """'GPU' -> DeviceSpec(None, 'gpu'), 'Box/GPU:ALL' -> DeviceSpec('box', 'gpu', 'all'); raise ConfigError else."""
    spec = parse_device_name(value)
    if spec is None:
        said = N_("device must be {forms} (N a device number), not {value!r}.")
        raise refused("device", said, forms=_(DEVICE_FORMS), value=value)
    return spec


def normalize_device(value: Any) -> str:
    """'GPU' -> 'gpu', ' cpu:1 ' -> 'cpu:1', 'Box/GPU:ALL' -> 'box/gpu:all'; raise ConfigError for anything else."""
    return str(parse_device(value))


def _int(field: str, value: Any, low: int, high: int, extra: str = "") -> int:
    bounds = {"field": field, "low": low, "high": high, "extra": extra}
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            said = N_("{field} must be a whole number from {low} to {high}{extra}, not {value!r}.")
            raise refused(field, said, **bounds, value=value)
    if not low <= value <= high:
        raise refused(field, N_("{field} must be from {low} to {high}{extra}, not {value}."), **bounds, value=value)
    return value


def canonical_execution(value: Any) -> Any:
    """An execution mode's current name: 'fast' -> 'multi-step-loop'; anything else unchanged (validated later)."""
    return EXECUTION_ALIASES.get(value, value) if isinstance(value, str) else value


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        said = N_("{field} must be one of {allowed}, not {value!r}.")
        raise refused(field, said, field=field, allowed=", ".join(allowed), value=value)
    return value


def _from_dict(cls: type, data: Any, not_a_dict: str) -> Any:
    if not isinstance(data, dict):
        raise refused("config", not_a_dict)
    unknown = sorted(set(data) - {f.name for f in fields(cls)})
    if unknown:
        raise refused(unknown[0], N_("config has an unknown field {name!r}."), name=unknown[0])
    return cls(**data)


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
    execution: str = "multi-step-loop"
    train_subset: int | None = None
    hidden_units: int = 128
    precision: str = "float32"
    xla: str = "auto"

    def __post_init__(self) -> None:
        _choice("dataset", self.dataset, DATASETS)
        _choice("model", self.model, MODELS)
        spec = parse_device(self.device)  # parsed once: the engine reads device_spec, never the text again
        object.__setattr__(self, "_device_spec", spec)
        object.__setattr__(self, "device", str(spec))
        object.__setattr__(self, "epochs", _int("epochs", self.epochs, 1, MAX_EPOCHS))
        _choice("optimizer", self.optimizer, OPTIMIZERS)
        object.__setattr__(self, "execution", _choice("execution", canonical_execution(self.execution), EXECUTIONS))
        object.__setattr__(self, "seed", _int("seed", self.seed, 0, MAX_SEED))
        object.__setattr__(self, "hidden_units", _int("hidden_units", self.hidden_units, 1, MAX_HIDDEN))
        _choice("precision", self.precision, PRECISIONS)
        _choice("xla", self.xla, XLA_CHOICES)

        lr = self.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr):
            said = N_("learning_rate must be a finite number above 0 and at most 10, not {lr!r}.")
            raise refused("learning_rate", said, lr=lr)
        if not 0 < lr <= MAX_LEARNING_RATE:
            raise refused("learning_rate", N_("learning_rate must be above 0 and at most 10, not {lr}."), lr=lr)
        object.__setattr__(self, "learning_rate", float(lr))

        full = TRAIN_SIZES[self.dataset]
        if self.train_subset is not None:
            high = MAX_SYNTHETIC if self.dataset == "synthetic" else full
            extra = _(" for {dataset}").format(dataset=self.dataset)
            object.__setattr__(self, "train_subset", _int("train_subset", self.train_subset, MIN_SUBSET, high, extra))
        n_train = self.train_size
        extra = _(" (the training set has {n:,} samples)").format(n=n_train)
        _int("batch_size", self.batch_size, 1, min(MAX_BATCH, n_train), extra)
        object.__setattr__(self, "batch_size", int(self.batch_size))
        if spec.mirrored and self.execution == "multi-step-loop":
            said = N_(
                "execution must be keras-fit or keras-fit-spe for device {device}: "
                "MirroredStrategy trains through model.fit."
            )
            raise refused("execution", said, device=self.device)

    @property
    def device_spec(self) -> DeviceSpec:
        """`device` as parsed once, when the config was built: its node, device type and number."""
        return self._device_spec

    @property
    def node(self) -> str | None:
        """The Ray node this run trains on, or None for this machine."""
        return self.device_spec.node

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
        return _from_dict(cls, data, N_("config must be an object with the run's settings."))


# -- batch-size sweeps ----------------------------------------------------------------------
SWEEP_KIND = "sweep"  # a sweep file's "kind"; a training run's file has none
DEFAULT_BATCH_SIZES = (16, 64, 256, 1024, 4096)
MAX_DEVICES = 8
MAX_BATCH_SIZES = 16
MAX_STEPS = 100_000
MAX_REPEATS = 50


def _listed(value: Any, field: str, most: int, said: str) -> list | tuple:
    """A comma-separated string or a list, of 1 to `most` items; else refused in the sentence `said`."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not 1 <= len(items) <= most:
        raise refused(field, said, n=most, value=value)
    return items


def _devices(value: Any) -> tuple[str, ...]:
    said = N_("devices must list 1 to {n} devices, such as cpu,gpu, not {value!r}.")
    items = _listed(value, "devices", MAX_DEVICES, said)
    names = []
    for item in items:
        try:
            names.append(normalize_device(item))
        except ConfigError:
            said = N_("devices must each be {forms}, not {value!r}.")
            raise refused("devices", said, forms=_(DEVICE_FORMS), value=item) from None
    if any(n.endswith(":all") for n in names):
        said = N_("devices must each be one device (a sweep times one at a time), not {value!r}.")
        raise refused("devices", said, value=value)
    if len({device_name(n).node for n in names}) > 1:
        said = N_("devices must all be on one machine (a sweep runs on one), not {value!r}.")
        raise refused("devices", said, value=value)
    canonical = [n if ":" in n else f"{n}:0" for n in names]  # 'gpu' is 'gpu:0'
    for i, name in enumerate(canonical):
        if name in canonical[:i]:
            raise refused("devices", N_("devices lists {device} twice."), device=names[i])
    return tuple(names)


def _batch_sizes(value: Any) -> tuple[int, ...]:
    said = N_("batch_sizes must list 1 to {n} batch sizes, not {value!r}.")
    items = _listed(value, "batch_sizes", MAX_BATCH_SIZES, said)
    sizes = []
    for item in items:
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item)
        sizes.append(_int("batch_sizes", item, 1, MAX_BATCH, _(" for each batch size")))
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
    precision: str = "float32"  # as TrainConfig's
    xla: str = "auto"

    kind: ClassVar[str] = SWEEP_KIND
    progress_unit: ClassVar[str] = "point"  # the runner reports "point 3 of 10" and emits "point" events

    def __post_init__(self) -> None:
        object.__setattr__(self, "devices", _devices(self.devices))
        _choice("model", self.model, MODELS)
        object.__setattr__(self, "batch_sizes", _batch_sizes(self.batch_sizes))
        if self.steps is not None:
            object.__setattr__(self, "steps", _int("steps", self.steps, 1, MAX_STEPS, _(" (or none, for auto)")))
        object.__setattr__(self, "repeats", _int("repeats", self.repeats, 1, MAX_REPEATS))
        object.__setattr__(self, "hidden_units", _int("hidden_units", self.hidden_units, 1, MAX_HIDDEN))
        _choice("dataset", self.dataset, DATASETS)
        object.__setattr__(self, "seed", _int("seed", self.seed, 0, MAX_SEED))
        _choice("precision", self.precision, PRECISIONS)
        _choice("xla", self.xla, XLA_CHOICES)

    @property
    def node(self) -> str | None:
        """The Ray node this sweep runs on, or None for this machine."""
        return device_name(self.devices[0]).node

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
        return _from_dict(cls, data, N_("config must be an object with the sweep's settings."))
