"""The Train view's sidebar: presets, dataset, model, device mode and the numbers, as TrainConfig fields.

Widget keys are TrainConfig's field names (plus "mode", the device mode); ui.view_state carries their
values across views, since the sidebar is drawn only on the Train view.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.engine import data as datasets
from core.engine import models
from core.engine.devices import GPU_ADVICE
from core.language.i18n import N_, _
from core.machine import hardware_check
from core.settings import device_modes
from core.settings.config import (
    EXECUTIONS,
    MAX_BATCH,
    MAX_EPOCHS,
    MAX_HIDDEN,
    MAX_LEARNING_RATE,
    MAX_SEED,
    MAX_SYNTHETIC,
    PRECISIONS,
    XLA_AUTO_RULE,
    XLA_CHOICES,
)
from core.settings.presets import PRESET_MODES, PRESETS
from ui import compare_settings, compared, links, view_state
from ui.resources import hardware

# The widget shows "the whole set" as 0; TrainConfig says None.
WIDGET_PRESETS = {name: {**p, "train_subset": p["train_subset"] or 0} for name, p in PRESETS.items()}
DEFAULTS = {**WIDGET_PRESETS["The tutorial"], "mode": "cpu"}
PRESET_NAMES = (
    N_("The tutorial"),
    N_("Quick demo"),
)  # core.settings.config.PRESETS' names, in the catalogs (the buttons)
OPTIMIZER_LABELS = {"sgd": N_("SGD (plain gradient descent)"), "adam": "Adam"}
EXECUTION_LABELS = {
    "multi-step-loop": N_("Multi-step loop: many steps per tf.function call"),
    "keras-fit": N_("Plain model.fit"),
    "keras-fit-spe": N_("model.fit with steps_per_execution"),
}


def values() -> dict:
    """The sidebar's values as TrainConfig fields (device and, in some modes, execution come from the mode)."""
    ss = st.session_state
    picked = {k: entered(k, ss.get(k, DEFAULTS[k])) for k in DEFAULTS if k != "mode"}
    return {**picked, "train_subset": picked["train_subset"] or None}


# Streamlit keeps these widgets' values through a rerun that drops stale widgets (one a live fragment's st.rerun
# sent as a page change: the number fields then showed 0), as ui.view_state does across views.
KEEP = "session"
# The address' names: every sidebar setting and the comparison's axis (its values go as "values": ui.links).
ADDRESS = {**DEFAULTS, "axis": compare_settings.AS_DEVICE}
PENDING = "preset_pending"  # (preset, the device mode it took) when picked before the GPU check answered
NOTED = "entered_numbers"  # session_state: widget key -> (the value sent, what Streamlit put in its place)


def apply_preset(name: str) -> None:
    """A preset's settings and device mode, kept at once (ui.view_state): a rerun that redraws the sidebar from older
    widget values cannot undo the click. Picked while the GPU check is out, its mode follows the answer."""
    ss = st.session_state
    ss.update(WIDGET_PRESETS[name])
    with_gpu, without = PRESET_MODES[name]
    ss.mode = with_gpu if hardware().gpus else without
    ss[PENDING] = (name, ss.mode) if hardware().state == hardware_check.CHECKING else None
    view_state.remember([*DEFAULTS])


def _preset_answered(hw: hardware_check.Hardware) -> None:
    # A preset picked while the check was out: with a GPU found, its GPU mode, unless the mode was changed since.
    ss = st.session_state
    pending = ss.get(PENDING)
    if pending is None or hw.state == hardware_check.CHECKING:
        return
    ss[PENDING] = None
    name, took = pending
    if hw.gpus and ss.get("mode") == took:
        ss.mode = PRESET_MODES[name][0]


def settings_ui(hw: hardware_check.Hardware) -> device_modes.Mode:
    """Presets, dataset, model, device mode and numbers in the sidebar; returns the chosen device mode."""
    links.read(ADDRESS, hw)  # a prepared link's settings, once per session, before any widget is drawn
    view_state.restore(DEFAULTS)
    _preset_answered(hw)
    sb = st.sidebar
    sb.header(_("Settings"))
    left, right = sb.columns(2)
    for col, name in zip((left, right), PRESETS, strict=True):
        col.button(_(name), key=f"preset_{name}", on_click=apply_preset, args=(name,), width="stretch")

    avail = {name: datasets.availability(name) for name in datasets.REGISTRY}
    sb.radio(
        _("Dataset"),
        list(datasets.REGISTRY),
        key="dataset",
        persist_state=KEEP,
        format_func=lambda n: _(datasets.REGISTRY[n].label),
        captions=[a.reason for a in avail.values()],
    )
    sb.selectbox(
        _("Model"),
        list(models.REGISTRY),
        key="model",
        format_func=lambda n: _(models.REGISTRY[n].label),
        persist_state=KEEP,
    )
    sb.caption(_(models.REGISTRY[st.session_state.model].description))
    mode = mode_ui(hw)
    compare_settings.axis_ui(hw)
    number_ui(sb, _("Epochs"), "epochs", 1, MAX_EPOCHS, step=1)
    number_ui(sb, _("Batch size"), "batch_size", 1, MAX_BATCH, step=10)
    number_ui(sb, _("Learning rate"), "learning_rate", 0.0001, MAX_LEARNING_RATE, step=0.001, format="%.4f")
    sb.selectbox(
        _("Optimizer"),
        list(OPTIMIZER_LABELS),
        key="optimizer",
        format_func=lambda k: _(OPTIMIZER_LABELS[k]),
        persist_state=KEEP,
    )
    with sb.expander(_("Advanced")):
        _advanced_ui(mode)
    view_state.remember(DEFAULTS)
    links.write(ADDRESS)  # the address follows the settings: a reload, or the link copied, keeps them
    return mode


def _advanced_ui(mode: device_modes.Mode) -> None:
    """The Advanced expander: seed, execution (unless the device mode sets it), subset, width, precision, XLA."""
    number_ui(st, _("Seed"), "seed", 0, MAX_SEED, step=1)
    fixed = all("execution" in run for run in mode.runs)
    st.radio(
        _("Execution"),
        EXECUTIONS,
        key="execution",
        format_func=lambda k: _(EXECUTION_LABELS[k]),
        disabled=fixed,
        persist_state=KEEP,
    )
    if fixed:
        st.caption(_("This device mode sets each run's execution, side by side."))
    number_ui(st, _("Training samples (0 = the whole set)"), "train_subset", 0, MAX_SYNTHETIC, step=1000)
    number_ui(st, _("Hidden units (MLP)"), "hidden_units", 1, MAX_HIDDEN, step=16)
    st.radio(_("Precision (Keras dtype policy)"), PRECISIONS, key="precision", horizontal=True, persist_state=KEEP)
    st.radio(
        _("XLA (jit_compile)"),
        XLA_CHOICES,
        key="xla",
        horizontal=True,
        persist_state=KEEP,
        help=_("{rule}.").format(rule=_(XLA_AUTO_RULE)),
    )


def number_ui(where, label: str, key: str, low: float, high: float, **options) -> None:
    """A number field whose range is said, not enforced by the widget: TrainConfig checks it, in one sentence.

    Streamlit's own bounds keep the previous value while the field shows the typed one in red, so Run would
    train with a number nobody sees; unbounded, every typed value reaches the page, and a bad one keeps Run off.
    """
    where.number_input(
        label,
        min_value=None,
        max_value=None,
        key=key,
        help=_("From {low:g} to {high:g}.").format(low=low, high=high),
        persist_state=KEEP,
        **options,
    )
    watch(key)  # a value Streamlit drops (2**63 - 1, NaN) is still the one a refusal names


def mode_ui(hw: hardware_check.Hardware) -> device_modes.Mode:
    """The device mode: every mode listed, the ones this machine lacks marked unavailable and why."""
    ss, sb = st.session_state, st.sidebar
    modes = device_modes.modes(hw)
    by_key = {m.key: m for m in modes}
    if ss.mode not in by_key:
        ss.mode = "cpu"
    sb.radio(
        _("Device"),
        list(by_key),
        key="mode",
        persist_state=KEEP,
        format_func=lambda k: by_key[k].label,
        captions=[
            _("unavailable: {reason}").format(reason=r) if (r := device_modes.unavailable(m, hw)) else "" for m in modes
        ],
    )
    notes = {hardware_check.CHECKING: _("Checking for GPUs…"), hardware_check.FAILED: compared.check_failed(hw.message)}
    if hw.state in notes:
        sb.caption(notes[hw.state])
    elif not hw.gpus:
        sb.caption(_("No GPU found. {advice}").format(advice=_(GPU_ADVICE)))
    return by_key[ss.mode]


def watch(key: str) -> None:
    """After the number field `key` is drawn: note what it sends next, if Streamlit replaces it, so a refusal names
    what was entered.

    Streamlit's number_input keeps a value only within what a browser's number can hold (whole numbers to 2**53 - 1)
    and finite: it replaces 2**63 - 1, 2**53 + 1, NaN or inf, as a hand-made page can send them, by the widget's
    default (0) before the page's script sees anything, and TrainConfig then refused "0". Streamlit offers no way to
    see the value sent, so this wraps the deserializer Streamlit keeps for the widget (read at the start of the
    next run, before the script) to note a value it replaced; `entered` gives it back while the field still holds the
    replacement. Without those internals (another Streamlit), nothing is noted: the refusal names Streamlit's value.
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    try:
        state = ctx.session_state._state
        widgets = state._new_widget_state
        metadata = widgets.widget_metadata[state._key_id_mapper.get_id_from_key(key)]
    except (AttributeError, KeyError, TypeError):
        return
    noted = st.session_state.setdefault(NOTED, {})  # a plain dict: written from Streamlit's thread, read by the page's
    keep = metadata.deserializer

    def deserialize(sent: Any) -> Any:
        value = keep(sent)
        if isinstance(sent, (int, float)) and not _same(value, sent):
            noted[key] = (sent, value)
        else:
            noted.pop(key, None)
        return value

    widgets.set_widget_metadata(replace(metadata, deserializer=deserialize))


def entered(key: str, current: Any) -> Any:
    """The value entered in the field `key`: the one it sent, while it still holds Streamlit's replacement (watch)."""
    sent, put = st.session_state.get(NOTED, {}).get(key, (None, None))
    return sent if sent is not None and _same(current, put) else current


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
