"""Comparisons: one base TrainConfig plus one axis (a TrainConfig field) with 2-4 distinct values.

AXES is the registry: the command-line word of each axis, the field it varies and how a typed value is
read. Every other setting is shared, so the runs differ in that one field only. Light to import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.language.i18n import N_, _
from core.settings.config import EXECUTIONS, PRECISIONS, XLA_CHOICES, ConfigError, TrainConfig, canonical_execution

MIN_VALUES, MAX_VALUES = 2, 4


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


def _word(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _device(value: Any) -> Any:
    return _word(value).lower() if isinstance(value, str) else value  # TrainConfig checks the name


def _same(value: Any) -> Any:
    # 'gpu' and 'gpu:0' are one device: a comparison of the two would compare nothing.
    return f"{value}:0" if value in ("cpu", "gpu") else value


@dataclass(frozen=True)
class Axis:
    """One thing a comparison may vary: a TrainConfig field, its label, its allowed values (None: a number or a
    device)."""

    field: str
    label: str
    allowed: tuple[str, ...] | None
    read: Callable[[Any], Any]  # a typed or widget value -> the field's value
    unit: str = ""  # after a number in a label: "batch 256"

    def name(self, value: Any) -> str:
        """How a value of this axis reads in a label or a sentence: 'GPU:0', 'mixed_bfloat16', 'XLA on', 'batch 256'."""
        names: dict[str, Callable[[Any], str]] = {
            "device": lambda v: str(v).upper(),
            "xla": lambda v: f"XLA {v}",
        }
        return names.get(self.field, lambda v: f"{self.unit}{v}")(value)


AXES: dict[str, Axis] = {
    "device": Axis("device", N_("Device"), None, _device),
    "execution": Axis("execution", N_("Execution"), EXECUTIONS, lambda v: canonical_execution(_word(v))),
    "precision": Axis("precision", N_("Precision"), PRECISIONS, _word),
    "xla": Axis("xla", N_("XLA (jit_compile)"), XLA_CHOICES, lambda v: _word(v).lower() if isinstance(v, str) else v),
    "batch_size": Axis("batch_size", N_("Batch size"), None, _whole, "batch "),
    "hidden_units": Axis("hidden_units", N_("Hidden units (MLP)"), None, _whole, "width "),
}


@dataclass(frozen=True)
class Comparison:
    """An axis and its 2-4 distinct values, checked where built; configs(base) gives one TrainConfig per value."""

    axis: str
    values: tuple[Any, ...]

    def __post_init__(self) -> None:
        if self.axis not in AXES:
            raise ConfigError(
                "axis",
                _("axis must be one of {allowed}, not {value!r}.").format(allowed=", ".join(AXES), value=self.axis),
            )
        items = self.values.split(",") if isinstance(self.values, str) else self.values
        if not isinstance(items, (list, tuple)):
            said = _("values must be a list of {low} to {high} {axis} values.")
            raise ConfigError("values", said.format(low=MIN_VALUES, high=MAX_VALUES, axis=self.axis))
        axis = AXES[self.axis]
        read = tuple(axis.read(v) for v in items)
        if not MIN_VALUES <= len(read) <= MAX_VALUES:
            raise ConfigError(
                "values",
                _("values must list {low} to {high} {axis} values, not {n}.").format(
                    low=MIN_VALUES, high=MAX_VALUES, axis=self.axis, n=len(read)
                ),
            )
        for value in read:
            if axis.allowed is not None and value not in axis.allowed:
                raise ConfigError(
                    "values",
                    _("{axis} values must each be one of {allowed}, not {value!r}.").format(
                        axis=self.axis, allowed=", ".join(axis.allowed), value=value
                    ),
                )
        keys = [_same(v) for v in read]
        for i, value in enumerate(read):
            if keys[i] in keys[:i]:
                said = _("values lists {axis} {value} twice; each value once.")
                raise ConfigError("values", said.format(axis=self.axis, value=value))
        object.__setattr__(self, "values", read)

    def configs(self, base: dict[str, Any]) -> list[TrainConfig]:
        """One validated TrainConfig per value, every other setting from `base`; ConfigError naming the field."""
        return [TrainConfig(**{**base, AXES[self.axis].field: value}) for value in self.values]

    def names(self) -> list[str]:
        """Each value as it reads in a label: ['float32', 'mixed_bfloat16']."""
        return [AXES[self.axis].name(v) for v in self.values]


def axis_of(configs: list[dict[str, Any]]) -> str | None:
    """The one axis along which these configs differ (every other field the same), or None."""
    if len(configs) < MIN_VALUES:
        return None
    differ = [name for name, axis in AXES.items() if len({str(c.get(axis.field)) for c in configs}) > 1]
    others = {k for c in configs for k in c} - {a.field for a in AXES.values()}
    shared = all(len({str(c.get(k)) for c in configs}) == 1 for k in others)
    return differ[0] if len(differ) == 1 and shared else None


def value_names(configs: list[dict[str, Any]]) -> tuple[list[str], str] | None:
    """(each run's value as it reads, where they all ran) for runs along one axis: (['float32', 'mixed_bfloat16'],
    ' on CPU'); None unless the runs differ in exactly one axis' field. The device axis' runs ran in several places:
    ''."""
    axis = axis_of(configs)
    if axis is None:
        return None
    field = AXES[axis].field
    where = "" if axis == "device" else f" on {str(configs[0].get('device', '?')).upper()}"
    return [AXES[axis].name(AXES[axis].read(c.get(field))) for c in configs], where
