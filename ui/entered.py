"""The number a field sent, where Streamlit put its own default in its place, so a refusal names what was entered.

Streamlit's number_input keeps a value only within what a browser's number can hold (whole numbers to 2**53 - 1)
and finite: it replaces 2**63 - 1, 2**53 + 1, NaN or inf, as a hand-made page can send them, by the widget's
default (0) before the page's script sees anything, and TrainConfig then refused "0". Streamlit offers no way to
see the value sent, so `watch` wraps the deserializer Streamlit keeps for the widget (read at the start of the
next run, before the script) to note a value it replaced; `value` gives it back while the field still holds the
replacement. Without those internals (another Streamlit), nothing is noted: the refusal names Streamlit's value.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

NOTED = "entered_numbers"  # session_state: widget key -> (the value sent, what Streamlit put in its place)


def watch(key: str) -> None:
    """After the number field `key` is drawn: note what it sends next, if Streamlit replaces it."""
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


def value(key: str, current: Any) -> Any:
    """The value entered in the field `key`: the one it sent, while it still holds Streamlit's replacement."""
    sent, put = st.session_state.get(NOTED, {}).get(key, (None, None))
    return sent if sent is not None and _same(current, put) else current


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
