"""The sidebar's "Compare along": an axis (core.settings.axes.AXES) and its 2-4 values, or the Device choice's own runs.

Widget keys: "axis" ("" = as the Device choice says), "axis_choices" (values of an axis with a fixed list),
"axis_numbers" (typed values of a number axis). The values are checked by core.settings.axes.Comparison, in one
sentence, when the page plans the runs; nothing is queued until they are good.
"""

from __future__ import annotations

import streamlit as st

from core.language.i18n import _
from core.machine import hardware_check
from core.settings import device_modes
from core.settings.axes import AXES, MAX_VALUES, MIN_VALUES, Comparison
from ui import view_state

AS_DEVICE = ""  # the Device choice's own runs: one device, CPU vs GPU, or the execution modes
DEFAULTS = {"axis": AS_DEVICE, "axis_choices": [], "axis_numbers": ""}
# What an axis starts with when picked: its most asked-for pair.
STARTING_VALUES = {
    "device": ["cpu", "gpu:0"],
    "execution": ["keras-fit", "multi-step-loop"],
    "precision": ["float32", "mixed_bfloat16"],
    "xla": ["off", "on"],
    "batch_size": "100, 1000",
    "hidden_units": "128, 1024",
}


def device_values(hw: hardware_check.Hardware) -> list[str]:
    """The devices a comparison may use: every one-device choice core.machine.hardware_check.modes lists (cluster nodes'
    too)."""
    return [m.runs[0]["device"] for m in device_modes.modes(hw) if len(m.runs) == 1 and set(m.runs[0]) == {"device"}]


def _start(hw: hardware_check.Hardware) -> None:
    ss = st.session_state
    start = STARTING_VALUES.get(ss.axis)
    if isinstance(start, str):
        ss.axis_numbers = start
    elif start is not None:
        options = options_for(ss.axis, hw)
        ss.axis_choices = [v for v in start if v in options] or options[:MIN_VALUES]


def options_for(axis: str, hw: hardware_check.Hardware) -> list[str]:
    """The values the picker offers for an axis with a fixed list (the devices come from the hardware check)."""
    return device_values(hw) if axis == "device" else list(AXES[axis].allowed or ())


def axis_ui(hw: hardware_check.Hardware) -> None:
    """Compare along an axis, with its values, or as the Device choice says; comparison() reads them."""
    view_state.restore(DEFAULTS)
    ss, sb = st.session_state, st.sidebar
    sb.selectbox(
        _("Compare along"),
        [AS_DEVICE, *AXES],
        key="axis",
        format_func=lambda a: _(AXES[a].label) if a else _("— as Device says"),
        on_change=_start,
        args=(hw,),
        persist_state="session",
        help=_("One base config plus one setting with 2-4 values; every other setting is shared, same seed."),
    )
    axis = ss.axis
    words = {"low": MIN_VALUES, "high": MAX_VALUES}
    if axis in AXES and (AXES[axis].allowed is not None or axis == "device"):
        options = options_for(axis, hw)
        ss.axis_choices = [v for v in ss.axis_choices if v in options]
        sb.multiselect(
            _("Values"),
            options,
            key="axis_choices",
            persist_state="session",
            help=_("{low} to {high} values; the first is the reference.").format(**words),
        )
    elif axis in AXES:
        sb.text_input(
            _("Values"),
            key="axis_numbers",
            persist_state="session",
            help=_("{low} to {high} values, comma-separated; the first is the reference.").format(**words),
        )
    if axis in AXES and axis != "device":
        sb.caption(_("Each value runs on the Device choice's device (the GPU, for CPU vs GPU)."))
    view_state.remember(DEFAULTS)


def comparison() -> Comparison | None:
    """The picked axis and values as a Comparison, None for the Device choice's own runs; ConfigError if bad."""
    ss = st.session_state
    axis = ss.get("axis", AS_DEVICE)
    if axis == AS_DEVICE:
        return None
    numbers = axis in AXES and AXES[axis].allowed is None and axis != "device"
    values = [v for v in ss.get("axis_numbers", "").split(",") if v.strip()] if numbers else ss.get("axis_choices", [])
    return Comparison(axis, tuple(values))
