"""The device modes the Train view offers (CPU, a GPU, CPU vs GPU, execution modes, a Ray node's), given the
hardware check's answer (core.machine.hardware_check), and the validated configs a mode's Run submits (plan).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.language.i18n import N_, _
from core.machine import backends
from core.machine.device_spec import device_name
from core.machine.hardware_check import CHECKING, FAILED, READY, Hardware
from core.settings.axes import AXES, Comparison
from core.settings.config import EXECUTIONS, ConfigError, TrainConfig


@dataclass(frozen=True)
class Mode:
    """A device choice: one run, or two runs side by side that differ only in `runs`' overrides."""

    key: str
    label: str
    runs: tuple[dict[str, str], ...]
    needs_gpu: bool


def modes(hardware: Hardware) -> list[Mode]:
    """Every device mode, GPU ones included even when there is no GPU (so they can be shown as unavailable)."""
    gpus = [f"gpu:{g.get('index', i)}" for i, g in enumerate(hardware.gpus)] or ["gpu:0"]
    names = {f"gpu:{g.get('index', i)}": g.get("name") for i, g in enumerate(hardware.gpus)}
    first = gpus[0]
    found = [
        Mode("cpu", "CPU", ({"device": "cpu"},), False),
        *(Mode(g, f"{g.upper()} · {names[g]}" if names.get(g) else "GPU", ({"device": g},), True) for g in gpus),
        Mode("cpu-vs-gpu", "CPU vs GPU", ({"device": "cpu"}, {"device": first}), True),
        Mode("fit:cpu", _(FIT_STEPS_LABEL).format(device=_("the CPU")), _fit_runs("cpu"), False),
        Mode("executions:cpu", _(EXECUTIONS_LABEL).format(device=_("the CPU")), _execution_runs("cpu"), False),
    ]
    if hardware.gpus:
        found += [
            Mode(f"fit:{first}", _(FIT_LABEL).format(device=first.upper()), _fit_runs(first), True),
            Mode(f"executions:{first}", _(EXECUTIONS_LABEL).format(device=first.upper()), _execution_runs(first), True),
        ]
    return found + [mode for node in hardware.nodes if not node.get("message") for mode in node_modes(node)]


def node_modes(node: dict[str, Any]) -> list[Mode]:
    """A Ray node's choices, each label naming its host: its CPU, a GPU, all its GPUs, and this CPU against its best."""
    name, host = node["name"], node["host"]
    where = f"{host.get('hostname') or name}"
    cpu = Mode(f"{name}/cpu", f"{name}/CPU · {where}", ({"device": f"{name}/cpu"},), False)
    found = host.get("gpus") or []
    # One GPU choice per node: Ray gives the job a free GPU and sets CUDA_VISIBLE_DEVICES, so it is gpu:0 there.
    which = f" (Ray gives one of {len(found)})" if len(found) > 1 else ""
    gpus = (
        [
            Mode(
                f"{name}/gpu:0",
                f"{name}/GPU:0 · {found[0]['name']}{which} · {where}",
                ({"device": f"{name}/gpu:0"},),
                False,
            )
        ]
        if found
        else []
    )
    if len(found) > 1:  # MirroredStrategy trains through model.fit (core.settings.config)
        runs = ({"device": f"{name}/gpu:all", "execution": "keras-fit"},)
        label = f"{name}/GPU:all ({len(found)} GPUs, MirroredStrategy) · {where}"
        gpus.append(Mode(f"{name}/gpu:all", label, runs, False))
    best = gpus[0] if gpus else cpu
    versus = Mode(f"cpu-vs-{best.key}", f"CPU here vs {best.label}", ({"device": "cpu"}, *best.runs), False)
    return [cpu, *gpus, versus]


FIT_LABEL = N_("Multi-step loop vs plain model.fit, on {device}")
FIT_STEPS_LABEL = N_("Plain model.fit, then the multi-step loop, then XLA, on {device}")
EXECUTIONS_LABEL = N_("model.fit vs steps_per_execution vs multi-step loop, on {device}")


def _fit_runs(device: str) -> tuple[dict[str, str], ...]:
    # The plain model.fit run first: it is the baseline the multi-step loop is measured against.
    if device_name(device).device_type == "gpu":  # auto is on for both on a GPU: the two differ in one thing
        return ({"device": device, "execution": "keras-fit"}, {"device": device, "execution": "multi-step-loop"})
    # On a CPU auto turns XLA on for the loop only: one change at a time, so the page shows what each bought.
    return (
        {"device": device, "execution": "keras-fit", "xla": "off"},
        {"device": device, "execution": "multi-step-loop", "xla": "off"},
        {"device": device, "execution": "multi-step-loop", "xla": "on"},
    )


def _execution_runs(device: str) -> tuple[dict[str, str], ...]:
    # Every execution mode, plain model.fit (the baseline) first, in core.settings.config.EXECUTIONS' order. On a CPU
    # auto turns XLA on for the loop alone, so XLA is off for all three there: they differ in the execution only.
    xla = {} if device_name(device).device_type == "gpu" else {"xla": "off"}
    return tuple({"device": device, "execution": name, **xla} for name in EXECUTIONS)


def unavailable(mode: Mode, hardware: Hardware) -> str | None:
    """Why `mode` cannot run here ('no GPU found on this machine'), or None if it can."""
    if not mode.needs_gpu:
        return None
    reasons: dict[str, Callable[[], str | None]] = {
        CHECKING: lambda: _("still checking for GPUs"),
        FAILED: lambda: _("the hardware check failed, so GPUs are off"),
        READY: lambda: None if hardware.gpus else _("no GPU found on this machine"),
    }
    return reasons[hardware.state]()


def plan(
    settings: dict[str, Any], mode_key: str, hardware: Hardware, comparison: Comparison | None = None
) -> list[TrainConfig]:
    """The validated configs to submit for `mode_key`, or along `comparison`'s axis on that mode's device.

    ConfigError (one sentence, nothing queued) if a setting is bad, a device absent, or a device's backend
    cannot run a precision or XLA choice (core.machine.backends).
    """
    by_key = {m.key: m for m in modes(hardware)}
    mode = by_key.get(mode_key)
    if mode is None:
        raise ConfigError("device", f"device mode must be one of {', '.join(by_key)}, not {mode_key!r}.")
    runs = mode.runs
    if comparison is not None:
        # Along an axis: the Device choice's device (its last, for a pair: the GPU of CPU vs GPU), every value on it.
        field = AXES[comparison.axis].field
        runs = tuple({**mode.runs[-1], field: value} for value in comparison.values)
        mode = Mode(mode.key, mode.label, runs, mode.needs_gpu and field != "device")
    reason = unavailable(mode, hardware)
    if reason is not None:
        raise ConfigError("device", _("{mode} cannot run here: {reason}.").format(mode=mode.label, reason=reason))
    configs = [TrainConfig(**{**settings, **overrides}) for overrides in runs]
    for config in configs:
        node = config.device_spec.node
        if (
            node is None
            and config.device_spec.device_type == "gpu"
            and (why := unavailable(Mode("", "", (), True), hardware))
        ):
            raise ConfigError(
                "device", _("{mode} cannot run here: {reason}.").format(mode=config.device.upper(), reason=why)
            )
        # A Ray node's device is judged by that node's own host description.
        host = (
            next((n.get("host") or {} for n in hardware.nodes if n.get("name") == node), {}) if node else hardware.host
        )
        backends.check(config.device, config.precision, config.xla, host)
    return configs
