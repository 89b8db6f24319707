"""`make share` (python -m ui.share) ends with its server: SIGTERM to it, and both are gone within moments.

The server is started as `make share` starts it, on 127.0.0.1 so nothing leaves this machine; no page opens, so no
TensorFlow is imported and the whole test takes about 2 s.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, wait_until


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc: no ps or pgrep needed)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "(name)", which may hold spaces
        except OSError:  # it ended meanwhile
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def ended(pid: int) -> bool:
    """Whether `pid` has exited (gone, or a zombie its parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_sigterm_ends_make_share_within_moments_of_its_server(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "share.log"
    with open(log, "w") as out:
        command = [sys.executable, "-m", "ui.share", "--address", "127.0.0.1", "--port", str(port)]
        share = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: len(re.findall(r"http://\S+", log.read_text())) >= 2, 60, "make share printing its URLs")
        (server,) = children(share.pid)
        began = time.monotonic()
        share.send_signal(signal.SIGTERM)
        wait_until(lambda: ended(server), 30, "the server ending on its parent's SIGTERM")
        server_ended = time.monotonic() - began
        assert share.wait(30) == 128 + signal.SIGTERM
        share_ended = time.monotonic() - began
    finally:
        share.kill()
    said = f"make share ended {share_ended:.1f} s after SIGTERM, its server {server_ended:.1f} s after"
    assert share_ended - server_ended < 2, said
    assert ended(server) and not os.path.exists(f"/proc/{server}")  # reaped by make share, never left a zombie
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
