"""Prepared links: the Train view's settings live in the page's address, as TensorFlow Playground keeps its state.

A presenter prepares links for a talk (`/?mode=fit:cpu&model=mlp&epochs=6&...`), and a reload keeps the
settings. The address is read once per browser session, before the sidebar's widgets are drawn, and written
back whenever the settings change. A bad value in a link is refused in the sentence a widget's bad value gets
(core.settings.config, core.settings.axes and core.machine.hardware_check check both), and Run stays off until that
setting is changed.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.machine import hardware_check
from core.settings import device_modes
from core.settings.axes import AXES, Comparison
from core.settings.config import ConfigError, TrainConfig

READ = "links_read"  # session key: this session has read its address
PROBLEMS = "link_problems"  # widget key -> (the value the link left it at, the sentence), while it stands
VALUES = "values"  # the address' name for a comparison's values (widgets axis_choices or axis_numbers)


def _parse(text: str, default: Any) -> Any:
    """The address' text as the widget's type (that of its default); ValueError where it cannot be one."""
    if isinstance(default, bool) or not isinstance(default, int | float):
        return text
    value = float(text)
    if isinstance(default, float):
        return value
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


def sentence(key: str, text: str, defaults: dict[str, Any], hw: hardware_check.Hardware) -> str | None:
    """The one sentence a bad value of `key` gets (as from its widget or a CLI flag), or None if it is good."""
    base = {k: v for k, v in defaults.items() if k not in ("mode", "axis")}
    base["train_subset"] = base["train_subset"] or None
    try:
        if key == "mode":
            if text not in {m.key for m in device_modes.modes(hw)}:  # one this machine lacks is the widget's to explain
                device_modes.plan(base, text, hw)
        elif key == "axis":
            if text:
                Comparison(text, ())
        else:
            try:
                value = _parse(text, defaults[key])
            except ValueError:
                value = text  # a word where a number goes: the config's own sentence for it
            TrainConfig(**{**base, key: None if key == "train_subset" and value == 0 else value})
    except ConfigError as err:
        if key == "axis" and err.field != "axis":
            return None  # a good axis (Comparison then asks for its values, read apart)
        return str(err)
    return None


def read(defaults: dict[str, Any], hw: hardware_check.Hardware) -> None:
    """Once per session: the address' settings into the widgets' keys, before they are drawn; bad ones said.

    defaults: every address name (the widgets' keys, "mode" and "axis") with its default value. A number out
    of range goes into its widget, which shows it as the link gave it; a value no widget can hold (a word for
    a number, an unknown model) leaves the widget at its default. Either way the sentence stands, and Run
    stays off, until the setting is changed.
    """
    ss = st.session_state
    if ss.get(READ):
        return
    ss[READ] = True
    params = st.query_params.to_dict()
    problems: dict[str, tuple[Any, str]] = {}
    for key in (k for k in defaults if k in params):
        said = sentence(key, params[key], defaults, hw)
        try:
            value = _parse(params[key], defaults[key])
        except ValueError:
            value = defaults[key]
        if said is not None and isinstance(value, str):
            value = defaults[key]  # not one of the widget's choices: it would not draw
        ss[key] = value
        if said is not None:
            problems[key] = (value, said)
    if VALUES in params and (axis := ss.get("axis")):
        problems |= _values(axis, params[VALUES], hw)
    ss[PROBLEMS] = problems


def _values(axis: str, text: str, hw: hardware_check.Hardware) -> dict[str, tuple[Any, str]]:
    from ui import compare_settings

    ss, items = st.session_state, [v.strip() for v in text.split(",") if v.strip()]
    try:
        Comparison(axis, tuple(items))
        if axis == "device" and (absent := [v for v in items if v not in compare_settings.device_values(hw)]):
            allowed = ", ".join(compare_settings.device_values(hw))
            raise ConfigError("values", f"device values must each be one of {allowed}, not {absent[0]!r}.")
    except ConfigError as err:
        key = "axis_numbers" if _typed(axis) else "axis_choices"
        return {key: (compare_settings.DEFAULTS[key], str(err))}  # the widget keeps its default
    if _typed(axis):
        ss["axis_numbers"] = ", ".join(items)
    else:
        ss["axis_choices"] = items
    return {}


def _typed(axis: str) -> bool:
    return AXES[axis].allowed is None and axis != "device"


def problem() -> str | None:
    """The sentence of a link's bad value that still stands (its setting unchanged since), else None."""
    ss = st.session_state
    standing = {k: v for k, v in ss.get(PROBLEMS, {}).items() if ss.get(k) == v[0]}
    ss[PROBLEMS] = standing
    return next((said for _, said in standing.values()), None)


def write(defaults: dict[str, Any]) -> None:
    """The settings as they are now into the address (only when they changed: each write is a message)."""
    ss = st.session_state
    wanted = {k: _text(ss.get(k, v)) for k, v in defaults.items()}
    if axis := ss.get("axis"):
        chosen = ss.get("axis_numbers", "") if _typed(axis) else ",".join(ss.get("axis_choices", []))
        wanted[VALUES] = chosen.replace(" ", "")
    else:
        wanted.pop("axis", None)
    ours = {*defaults, VALUES}
    current = {k: v for k, v in st.query_params.to_dict().items() if k in ours}
    if current != wanted:
        for key in current.keys() - wanted.keys():
            del st.query_params[key]
        st.query_params.update(wanted)


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
