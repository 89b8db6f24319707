"""What Run sweep would submit: the devices a sweep may list here, and the validated SweepConfig."""

from __future__ import annotations

from core.language.i18n import _
from core.machine import hardware_check
from core.settings import device_modes
from core.settings.config import ConfigError, SweepConfig


def sweep_devices(hw: hardware_check.Hardware) -> dict[str, device_modes.Mode]:
    """The devices a sweep may list (cpu, each gpu:N), each with its single-device mode, GPUs shown even if absent."""
    # One device each (a sweep times one device at a time: no gpu:all), a Ray node's included.
    return {m.runs[0]["device"]: m for m in device_modes.modes(hw) if len(m.runs) == 1 and len(m.runs[0]) == 1}


def plan_sweep(values: dict, hw: hardware_check.Hardware) -> SweepConfig:
    """The validated SweepConfig Run sweep would submit; ConfigError if a setting is bad or a device absent."""
    known = sweep_devices(hw)
    if not values.get("devices"):
        raise ConfigError("devices", _("Pick at least one device to sweep."))
    for name in values["devices"]:
        mode = known.get(name)
        if mode is None:
            raise ConfigError(
                "devices", _("devices must be among {known}, not {name!r}.").format(known=", ".join(known), name=name)
            )
        if reason := device_modes.unavailable(mode, hw):
            raise ConfigError(
                "devices", _("{mode} cannot be swept here: {reason}.").format(mode=mode.label, reason=reason)
            )
    return SweepConfig(**values)
