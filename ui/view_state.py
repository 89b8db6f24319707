"""Widget values that survive switching views.

Streamlit drops a widget's value at the end of any run that does not draw the widget, which is
every run of another view. So a view keeps its settings under one non-widget key: `restore` puts
them back before the view draws its widgets, `remember` copies them after.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

KEPT = "kept_settings"  # not a widget key: Streamlit never clears it


def restore(defaults: Mapping[str, Any]) -> None:
    """Give every key in `defaults` a value before its widget is drawn: the kept one, else the default."""
    ss = st.session_state
    kept = ss.get(KEPT, {})
    for key, default in defaults.items():
        if key not in ss:
            ss[key] = kept.get(key, default)


def remember(keys: Iterable[str]) -> None:
    """Keep the current values of `keys` for the next time their view is drawn."""
    ss = st.session_state
    ss[KEPT] = {**ss.get(KEPT, {}), **{k: ss[k] for k in keys if k in ss}}
