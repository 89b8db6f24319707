"""Who a page is: the presenter (may start, stop, delete, import, salvage) or a viewer (sees everything, live).

`make share` starts the server with a random token in $TFDASH_PRESENTER_TOKEN (ui/share.py) and prints a
presenter URL carrying it as ?token=...; every other page is a viewer. With no token configured (`make run`,
which listens on 127.0.0.1 only) every page on this machine is the presenter, as before.

As Jupyter does, the token is seen once: the server (ui/guard.py) answers the presenter URL with a signed,
HttpOnly cookie for this browser and sends it on to the same address without the token, so neither the address
bar nor a reload holds it, and a reload stays the presenter. The cookie is worth nothing once ended (the page's
"End presenter session") or once `make share` stops (the signing key lives in that server's memory only).
A page served without the guard still reads ?token= itself, once per session, and takes it out of the address.
Every action checks allowed() itself: a disabled widget is only the browser's word, and a hostile page can send
any widget's value; the server refuses a non-presenter's upload before reading it (ui/guard.py).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from dataclasses import dataclass

import streamlit as st

from core.language.i18n import N_, _

TOKEN_ENV = "TFDASH_PRESENTER_TOKEN"  # the environment, not argv: `ps` shows every process's arguments to all users
PARAM = "token"
COOKIE = "tfdash_presenter"  # the presenter's signed cookie (HttpOnly, SameSite=Strict)
REFUSED = "tfdash_token_refused"  # set for a minute when a link's token was wrong, so the page can say so
COOKIE_MAX_AGE_S = 12 * 3600  # a long talk; `make share` stopping ends it sooner
KEY = "access_role"  # session_state: this session's Access, decided once
ASK = "ask the presenter"
DENIED = N_("Only the presenter can do that; ask the presenter.")  # shown through _() where said
_SECRET = secrets.token_bytes(32)  # this server process's signing key: a restart makes every cookie worthless
_lock = threading.Lock()
_cookies: dict[str, float] = {}  # nonce -> expiry of each presenter cookie not ended
_sessions: set[str] = set()  # Streamlit session ids of presenter pages: only they may upload (ui/guard.py)


@dataclass(frozen=True)
class Access:
    """A page's role and, for the people in front of it, one sentence saying what it may do (empty: say nothing)."""

    presenter: bool
    sentence: str


def check(given: str | None, expected: str | None, remote_ip: str | None = None, cookie: bool = False) -> Access:
    """The role for a page opened with token `given` (or a valid presenter `cookie`) on a server whose token is
    `expected` (None: `make run`).

    remote_ip is the page's address as Streamlit sees it (None for this machine). Without a token only this
    machine's pages present: `make run` listens on 127.0.0.1, so another address means the server was
    exposed some other way (a proxy, a hand-typed --server.address), and it gets a viewer.
    """
    if not expected:
        if remote_ip is None:
            return Access(True, "")
        return Access(False, N_("Viewer: this server has no presenter link, so only its own machine can start runs."))
    # Bytes, not str: compare_digest refuses a non-ASCII str, and a hostile URL may carry one.
    if cookie or (given is not None and hmac.compare_digest(given.encode(), expected.encode())):
        return Access(
            True,
            N_(
                "Presenter: this page starts and stops runs and changes the history. Keep its link off the projector; "
                "this browser stays the presenter after a reload, until you end it here or `make share` stops."
            ),
        )
    if given:
        return Access(
            False, N_("Viewer: the presenter's link has a token, and this page's is not it; ask the presenter to run.")
        )
    return Access(
        False, N_("Viewer: every run shows here live; starting, stopping and changing the history: ask the presenter.")
    )


def expected_token() -> str | None:
    """The server's presenter token ($TFDASH_PRESENTER_TOKEN), or None on `make run`."""
    return os.environ.get(TOKEN_ENV) or None


def one_value(values: list[str]) -> str | None:
    """The token a link gives: its one value; several (`?token=a&token=b`) are never a presenter, whichever is last."""
    if len(values) == 1:
        return values[0]
    return "\n".join(values) or None  # a token never holds a newline: several values compare as a wrong one


def is_token_key(key: str) -> bool:
    """Whether a query parameter is a token of any case (`TOKEN`, `Token`): each is taken out of the address."""
    return key.lower() == PARAM


def issue_cookie() -> str:
    """A new presenter cookie's value: a nonce and its signature, valid until ended or COOKIE_MAX_AGE_S."""
    nonce = secrets.token_urlsafe(18)
    with _lock:
        _cookies[nonce] = time.time() + COOKIE_MAX_AGE_S
    return f"{nonce}.{_sign(nonce)}"


def cookie_is_valid(value: str | None) -> bool:
    """Whether a presenter cookie was issued by this server, is unexpired and not ended (compared in constant time)."""
    nonce, _dot, signature = (value or "").partition(".")
    if not nonce or not hmac.compare_digest(signature.encode(), _sign(nonce).encode()):
        return False
    with _lock:
        return _cookies.get(nonce, 0) > time.time()


def end_cookie(value: str | None) -> None:
    """End a presenter cookie here: the browser may keep it, worthless."""
    with _lock:
        _cookies.pop((value or "").partition(".")[0], None)


def _sign(nonce: str) -> str:
    return hmac.new(_SECRET, nonce.encode(), hashlib.sha256).hexdigest()


def may_upload(session_id: str) -> bool:
    """Whether the Streamlit session `session_id` is a presenter's page (the only pages that may upload)."""
    with _lock:
        return session_id in _sessions


def session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return getattr(ctx, "session_id", None)


def _cookie(name: str) -> str | None:
    try:
        value = st.context.cookies.get(name)
    except Exception:  # noqa: BLE001 - AppTest's stand-in runtime has no request: no cookies
        return None
    return value if isinstance(value, str) else None  # AppTest's stand-in gives a non-str


def role() -> Access:
    """This session's role: decided on its first call (the presenter cookie, else ?token= and the server's token),
    then kept; the token, in any case, is taken out of the address bar."""
    ss = st.session_state
    if KEY not in ss:
        given = one_value(st.query_params.get_all(PARAM))
        if given is None and _cookie(REFUSED):
            given = "\n"  # the guard took a wrong token out of the address: say so, as for a wrong token here
        ip = st.context.ip_address  # None for this machine; AppTest's stand-in runtime gives a non-str
        ss[KEY] = check(given, expected_token(), ip if isinstance(ip, str) else None, cookie_is_valid(_cookie(COOKIE)))
        for key in [k for k in st.query_params if is_token_key(k)]:
            del st.query_params[key]  # out of the address bar (and its history) once it has been read
        if ss[KEY].presenter and (session := session_id()):
            with _lock:
                _sessions.add(session)
    return ss[KEY]


def end_presenter() -> None:
    """End this browser's presenter session (its cookie, this page's role): the page is a viewer from now on."""
    end_cookie(_cookie(COOKIE))
    with _lock:
        _sessions.discard(session_id())
    st.session_state[KEY] = Access(
        False, N_("Viewer: the presenter session of this browser has ended; ask the presenter to run.")
    )


def role_ui() -> None:
    """The page's role, said when it matters; a presenter's way to end it; a token after '#' out of the address."""
    access = role()
    if access.sentence:
        st.caption(_(access.sentence))  # the role's sentence, as stored (English), in the page's language
    if access.presenter and expected_token():
        st.button(
            _("End presenter session"),
            key="end_presenter",
            on_click=end_presenter,
            help=_("This browser becomes a viewer; the presenter link from the terminal makes it the presenter again."),
        )
    # Once per page: the server never sees '#token=', so the page removes it.
    if KEY + "_fragment" not in st.session_state:
        st.session_state[KEY + "_fragment"] = True
        st.html(_FRAGMENT_SCRIPT, unsafe_allow_javascript=True)


_FRAGMENT_SCRIPT = (
    "<script>if (/(^|[#&;])token=/i.test(window.location.hash)) "
    "history.replaceState(null, '', window.location.pathname + window.location.search);</script>"
)


def allowed() -> bool:
    """Whether this page may change anything: start, stop, delete, import, salvage."""
    return role().presenter


def help_text(what: str) -> str | None:
    """A disabled control's tooltip for a viewer ('Starting a run is the presenter's: ask the presenter.')."""
    return None if allowed() else _("{what} is the presenter's: ask the presenter.").format(what=what)
