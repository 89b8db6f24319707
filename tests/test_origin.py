"""A foreign web page's websocket is refused by the real server without the server contacting anything.

Streamlit's own origin check looks this machine's addresses up (a UDP connect() and an HTTP GET to a public
address service) at every foreign attempt; ui/guard.py answers first. The server (`streamlit run app.py`, as
`make run` starts it) runs with a sitecustomize that logs every connect(), connect_ex() and getaddrinfo() its
process makes, so the count is the server's own, at the socket level.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.conftest import ROOT
from ui.guard import FOREIGN
from ui.share import wait_until_up

HOOK = """
import os, socket
LOG = os.environ["TFDASH_NET_LOG"]

def note(what, where):
    with open(LOG, "a") as log:
        log.write(f"{os.getpid()} {what} {where!r}\\n")

connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
socket.socket.connect = lambda self, address: (note("connect", address), connect(self, address))[1]
socket.socket.connect_ex = lambda self, address: (note("connect_ex", address), connect_ex(self, address))[1]
socket.getaddrinfo = lambda host, *a, **k: (note("getaddrinfo", host), getaddrinfo(host, *a, **k))[1]
note("hooked", None)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`streamlit run app.py` on a free port of 127.0.0.1, every socket call of its process logged; (port, log)."""
    hook = tmp_path_factory.mktemp("hook")
    (hook / "sitecustomize.py").write_text(HOOK)
    log = hook / "net.log"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(hook), "TFDASH_NET_LOG": str(log)}
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--logger.hideWelcomeMessage",
        "true",
    ]  # as `make run`
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until_up(f"http://127.0.0.1:{port}", proc, timeout=60), "the server did not start"
        assert f"{proc.pid} hooked" in log.read_text(), "the socket hook is not in the server's process"
        yield port, log
    finally:
        proc.terminate()
        proc.wait(20)


def handshake(port: int, origin: str) -> tuple[int, str]:
    """Open /_stcore/stream as a page of `origin` would (Host: this server); the handshake's status and body."""
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    try:
        with connect(url, subprotocols=["streamlit"], additional_headers={"Origin": origin}, open_timeout=30):
            return 101, ""
    except InvalidStatus as refused:
        return refused.response.status_code, refused.response.body.decode()


def test_twenty_foreign_origins_are_refused_and_the_server_contacts_nothing(server):
    port, log = server
    before = log.read_text().splitlines()
    origins = ["http://evil.example"] * 18 + ["https://a.example:8501", "http://127.0.0.1.evil.example"]
    answers = [handshake(port, origin) for origin in origins]
    own = handshake(port, f"http://127.0.0.1:{port}")  # this server's own page still opens its websocket
    during = log.read_text().splitlines()[len(before) :]
    assert during == [], f"the server made {len(during)} socket calls: {during[:4]}"
    assert [status for status, _ in answers] == [403] * 20 and own == (101, "")
    assert all(body == FOREIGN + "\n" for _, body in answers), answers[0]
