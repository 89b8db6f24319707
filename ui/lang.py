"""Which language the page speaks: `?lang=zh|en` in the address, else the sidebar's switch, else the browser's.

apply() decides it at the start of every script run (streamlit_app.main) and keeps it in session_state, where
core.language.i18n's resolver finds it from any thread that runs this session's script: a callback or a live tick, which
Streamlit may run in a new thread, speaks the page's language too. A language chosen (by the address or the
switch) is written back to the address, so a reload, a view change and a prepared link keep it; ui.links writes
only its own names there, so the two never overwrite each other.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.language import i18n
from core.language.i18n import N_, _  # noqa: F401 (the entry takes them from here: it imports only ui/)

PARAM = "lang"  # the address' name
KEY = "lang"  # session_state: the language chosen on this page, by its address or its switch
NOW = "lang_now"  # session_state: the language this page speaks (chosen, else the browser's)
SWITCH = "lang_switch"  # the switch's widget key
NAMES = {"en": "English", "zh": "简体中文"}  # each language in its own words


def _browser() -> str:
    locale = (st.context.locale or "").lower()
    return "zh" if locale.startswith("zh") else i18n.ENGLISH


def chosen() -> str:
    """The page's language: the address', else the one chosen here before, else the browser's, else English."""
    ss, asked = st.session_state, st.query_params.get(PARAM)
    if asked in NAMES:
        ss[KEY] = asked
    if (kept := ss.get(KEY)) in NAMES:
        if st.query_params.get(PARAM) != kept:
            st.query_params[PARAM] = kept  # a view change empties the address: the language stays in it
        return kept
    return _browser()


def apply() -> str:
    """Speak the page's language in this script run (and its callbacks and ticks after it); returns it."""
    st.session_state[NOW] = code = chosen()
    return code


def _session() -> str | None:
    # core.language.i18n's resolver: None off a page's script thread (the runner's threads, a test's own thread).
    if get_script_run_ctx(suppress_warning=True) is None:
        return None
    return st.session_state.get(NOW)


i18n.set_resolver(_session)


def _switched() -> None:
    if (code := st.session_state[SWITCH]) in NAMES:  # a click on the language shown unselects it: kept
        st.session_state[KEY] = st.session_state[NOW] = st.query_params[PARAM] = code


def switch_ui(code: str, where=None) -> None:
    """The language switch, each language named in its own words: in the sidebar of a view that has one (Train),
    else under the view (a sidebar of its own would take History's table width at 1280x720)."""
    st.session_state[SWITCH] = code
    (where or st.sidebar).segmented_control(
        _("Language"), list(NAMES), format_func=NAMES.get, key=SWITCH, on_change=_switched, label_visibility="collapsed"
    )
