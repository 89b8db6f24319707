"""A page session without a browser: a raw websocket client speaking Streamlit 1.67's protocol, as a hostile page
(or a room of viewers, bench/room.py) would.

It does what the browser's page does: fetches the page (for the XSRF cookie), opens /_stcore/stream with the
`streamlit` subprotocol, asks for a script run (BackMsg.rerun_script), reads the ForwardMsgs back (the session
id, each element's text, the fragments that rerun themselves) and reruns a fragment when asked (auto_rerun).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import InvalidHandshake, InvalidStatus
from websockets.sync.client import connect

TEXT_FIELDS = ("markdown", "alert", "text", "heading", "code")


class Refused(Exception):
    """The server refused the page or its websocket; the message says how."""


@dataclass
class Run:
    """One script run as the session saw it: its elements' text by place, how it finished, and how long it took."""

    texts: dict[tuple, str] = field(default_factory=dict)
    finished: str | None = None
    seconds: float = 0.0
    fragment: bool = False  # a fragment's rerun, not the whole page
    buttons: dict[str, bool] = field(default_factory=dict)  # a button's key (its id's tail) -> disabled
    button_ids: dict[str, str] = field(default_factory=dict)  # a button's key -> its widget id
    messages: int = 0  # ForwardMsgs read: what the server sent for this run (bench/room.py)


class Session:
    """One page session: connect(), run(), then tick() the live fragment as the browser would."""

    def __init__(self, base_url: str, host: str | None = None, cookies: dict[str, str] | None = None):
        parts = urlsplit(base_url)
        self.address = (parts.hostname, parts.port)
        self.host = host or parts.netloc  # the Host header: another name reaching this address, for a rebinding test
        self.cookies = dict(cookies or {})
        self.session_id: str | None = None
        self.page_hashes: dict[str, str] = {}  # page name -> its script hash
        self.fragments: dict[str, float] = {}  # fragment id -> its run_every interval (s)
        self.texts: dict[tuple, str] = {}  # the page as it stands: delta path -> text
        self.widget_ids: dict[str, str] = {}  # a widget's key -> its id, as the page drew it
        self.page_hash = ""  # the script hash of the page on screen
        self.watch: str | None = None  # a text to look for in every delta as it arrives (a browser shows it then)
        self.watch_seen: float | None = None  # time.monotonic() when a delta first said it
        self._ws = None
        self._lock = threading.Lock()

    # -- HTTP -------------------------------------------------------------------------------------
    def get(self, path: str = "/") -> http.client.HTTPResponse:
        """A GET under this session's Host, with its cookies; the cookies the answer sets are kept."""
        conn = http.client.HTTPConnection(*self.address, timeout=30)
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", self.host)
        if self.cookies:
            conn.putheader("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        conn.endheaders()
        reply = conn.getresponse()
        reply.body = reply.read()
        for header in reply.headers.get_all("set-cookie") or []:
            jar = SimpleCookie()
            jar.load(header)
            self.cookies.update({k: m.value for k, m in jar.items()})
        conn.close()
        return reply

    def put_file(self, name: str, data: bytes) -> int:
        """PUT a file to /_stcore/upload_file as the uploader widget does; the HTTP status."""
        boundary = "tfdashboundary"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                f"Content-Type: application/json\r\n\r\n"
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )
        conn = http.client.HTTPConnection(*self.address, timeout=60)
        conn.putrequest("PUT", f"/_stcore/upload_file/{self.session_id}/file-{time.time_ns()}", skip_host=True)
        for key, value in (
            ("Host", self.host),
            ("Content-Type", f"multipart/form-data; boundary={boundary}"),
            ("Content-Length", str(len(body))),
            ("X-Xsrftoken", self.cookies.get("_streamlit_xsrf", "")),
            ("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items())),
        ):
            conn.putheader(key, value)
        conn.endheaders()
        try:
            conn.send(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the body was read: the status says so
        status = conn.getresponse().status
        conn.close()
        return status

    # -- the websocket ---------------------------------------------------------------------------
    def connect(self, timeout: float = 30) -> Session:
        """Load the page and the XSRF cookie, then open the session's websocket; Refused if either is refused."""
        page = self.get("/")
        if page.status != 200:
            raise Refused(f"the page answered {page.status}: {page.body.decode(errors='replace').strip()}")
        self.get("/_stcore/health")  # as the page's script does first: it sets the XSRF cookie
        sock = socket.create_connection(self.address, timeout=timeout)
        scheme_host = f"ws://{self.host}/_stcore/stream"
        try:
            self._ws = connect(
                scheme_host,
                sock=sock,
                subprotocols=["streamlit", self.cookies["_streamlit_xsrf"]]
                if "_streamlit_xsrf" in self.cookies
                else ["streamlit"],
                additional_headers={
                    "Origin": f"http://{self.host}",
                    "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
                },
                open_timeout=timeout,
                max_size=None,
                legacy=True,  # a connection held across calls, not a context manager
            )
        except (InvalidStatus, InvalidHandshake, OSError) as err:
            raise Refused(f"the websocket was refused ({err})") from None
        return self

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()

    def run(
        self, page: str | None = None, fragment: str | None = None, timeout: float = 60, widgets=None, query: str = ""
    ) -> Run:
        """Ask for a script run (the page `page`, or only `fragment`) and read until it finishes; what it drew."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = query
        if page is not None:
            state.page_script_hash = self.page_hashes.get(page, "")
        if fragment is not None:
            state.fragment_id = fragment
            state.is_auto_rerun = True
        if widgets is not None:
            state.widget_states.CopyFrom(widgets)
        if fragment is not None:
            state.page_script_hash = self.page_hash  # a fragment of the page on screen
        began = time.monotonic()
        self._ws.send(msg.SerializeToString())
        run = Run(fragment=fragment is not None)
        deadline = began + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no end of the script run within {timeout:.0f} s")
            try:
                raw = self._ws.recv(timeout=left)
            except TimeoutError:
                continue
            if self._read(ForwardMsg.FromString(raw), run):
                run.seconds = time.monotonic() - began
                return run

    def _read(self, fwd: ForwardMsg, run: Run) -> bool:
        """Take in one ForwardMsg; True when it ends the run (script_finished)."""
        run.messages += 1
        kind = fwd.WhichOneof("type")
        if kind == "new_session":  # every run of the script starts with one; a whole run draws the page afresh
            init = fwd.new_session.initialize
            self.session_id = init.session_id or self.session_id
            self.page_hashes = {p.page_name: p.page_script_hash for p in fwd.new_session.app_pages}
            self.page_hash = fwd.new_session.page_script_hash
            if not run.fragment:
                self.fragments, self.texts = {}, {}  # its fragments say their ids again (auto_rerun)
        elif kind == "auto_rerun":
            self.fragments[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
        elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            element = fwd.delta.new_element
            which = element.WhichOneof("type")
            path = tuple(fwd.metadata.delta_path)
            if which in TEXT_FIELDS:
                part = getattr(element, which)
                text = part.code_text if which == "code" else part.body
                run.texts[path] = self.texts[path] = text
                if self.watch and self.watch_seen is None and self.watch in text:
                    self.watch_seen = time.monotonic()
            elif which == "button":
                key = element.button.id.rsplit("-", 1)[-1]
                run.buttons[key], run.button_ids[key] = element.button.disabled, element.button.id
            elif which is not None and getattr(getattr(element, which), "id", ""):
                widget_id = getattr(element, which).id
                self.widget_ids[widget_id.rsplit("-", 1)[-1]] = widget_id
        elif kind == "script_finished":
            run.finished = ForwardMsg.ScriptFinishedStatus.Name(fwd.script_finished)
            if run.finished == "FINISHED_EARLY_FOR_RERUN":  # st.rerun(): the whole page runs next, read it too
                run.fragment = False
                return False
            return True
        return False

    def page_text(self) -> str:
        """Every text the page shows now, in order."""
        return "\n".join(text for _, text in sorted(self.texts.items()))


def click(run: Run, key: str):
    """WidgetStates that press the button keyed `key` (as the browser sends a click): for Session.run(widgets=...)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    states = WidgetStates()
    state = states.widgets.add()
    state.id = run.button_ids[key]
    state.trigger_value = True
    return states


def set_number(session: Session, key: str, value: int, states=None):
    """WidgetStates (new, or `states` added to) that set the number input keyed `key` to `value`."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    states = states or WidgetStates()
    state = states.widgets.add()
    state.id = session.widget_ids[key]
    state.int_value = value
    return states
