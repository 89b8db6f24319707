"""Who a page is: the presenter (may start, stop, delete, import, salvage) or a viewer (sees everything, live).

`make share` starts the server with a random token in $TFDASH_PRESENTER_TOKEN (ui/share.py) and prints a
presenter URL carrying it as ?token=...; a page opened with that token is the presenter, every other page a
viewer. With no token configured (`make run`, which listens on 127.0.0.1 only) every page on this machine is
the presenter, as before. The role is decided once per browser session, on its first run, and kept in
session_state; the token is then taken out of the page's address, so a projected address bar never shows it.
Every action checks allowed() itself: a disabled widget is only the browser's word, and a hostile page
can send any widget's value.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass

import streamlit as st

TOKEN_ENV = "TFDASH_PRESENTER_TOKEN"  # the environment, not argv: `ps` shows every process's arguments to all users
PARAM = "token"
KEY = "access_role"  # session_state: this session's Access, decided once
ASK = "ask the presenter"
DENIED = f"Only the presenter can do that; {ASK}."


@dataclass(frozen=True)
class Access:
    """A page's role and, for the people in front of it, one sentence saying what it may do (empty: say nothing)."""

    presenter: bool
    sentence: str


def check(given: str | None, expected: str | None, remote_ip: str | None = None) -> Access:
    """The role for a page opened with token `given` on a server whose token is `expected` (None: `make run`).

    remote_ip is the page's address as Streamlit sees it (None for this machine). Without a token only this
    machine's pages present: `make run` listens on 127.0.0.1, so another address means the server was
    exposed some other way (a proxy, a hand-typed --server.address), and it gets a viewer.
    """
    if not expected:
        if remote_ip is None:
            return Access(True, "")
        return Access(False, "Viewer: this server has no presenter link, so only its own machine can start runs.")
    # Bytes, not str: compare_digest refuses a non-ASCII str, and a hostile URL may carry one.
    if given is not None and hmac.compare_digest(given.encode(), expected.encode()):
        return Access(
            True,
            "Presenter: this page starts and stops runs and changes the history. Keep its link off the projector; "
            "a reload makes it a viewer, so open the link from the terminal again.",
        )
    if given:
        return Access(False, f"Viewer: the presenter's link has a token, and this page's is not it; {ASK} to run.")
    return Access(False, f"Viewer: every run shows here live; starting, stopping and changing the history: {ASK}.")


def role() -> Access:
    """This session's role: decided on its first call from ?token= and $TFDASH_PRESENTER_TOKEN, then kept."""
    ss = st.session_state
    if KEY not in ss:
        given = st.query_params.get(PARAM)
        ip = st.context.ip_address  # None for this machine; AppTest's stand-in runtime gives a non-str
        ss[KEY] = check(given, os.environ.get(TOKEN_ENV) or None, ip if isinstance(ip, str) else None)
        if PARAM in st.query_params:
            del st.query_params[PARAM]  # out of the address bar (and its history) once it has been read
    return ss[KEY]


def allowed() -> bool:
    """Whether this page may change anything: start, stop, delete, import, salvage."""
    return role().presenter


def help_text(what: str) -> str | None:
    """A disabled control's tooltip for a viewer ('Starting a run is the presenter's: ask the presenter.')."""
    return None if allowed() else f"{what} is the presenter's: {ASK}."
