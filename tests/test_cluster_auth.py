"""A Ray cluster no stranger can use (issue 19, item 1), with real local Ray heads started both ways:
`python -m core cluster-head` (token authentication) and Ray's plain `ray start --head` (none).

Each head runs in its own process group with its own HOME, temp dir and ports, so nothing here reads or writes
this machine's ~/.ray or another cluster; each is ended with its group.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.cluster import auth, connect
from tests.conftest import ROOT, require, run_cli, wait_until

pytestmark = pytest.mark.ray


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_flags(tmp: Path) -> list[str]:
    """`ray start` flags for a small head of its own: one CPU, no dashboard, a short temp dir (Ray's sockets)."""
    short = Path("/tmp") / f"rt{os.getpid()}{tmp.name[-6:]}"
    return ["--temp-dir", str(short), "--num-cpus", "1", "--include-dashboard", "false"]


def start(argv: list[str], home: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**os.environ, "HOME": str(home), **(env or {})},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def end(proc: subprocess.Popen) -> None:
    """The head and everything it started: its process group."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """`python -m core cluster-head --block`: (its printed lines, its HOME, GCS port, Ray Client port)."""
    require(subprocess.run([sys.executable, "-c", "import ray"], capture_output=True).returncode == 0, "Ray")
    tmp = tmp_path_factory.mktemp("head")
    port, client = free_port(), free_port()
    proc = start(
        [
            sys.executable,
            "-m",
            "core",
            "cluster-head",
            "--block",
            "--node-name",
            "gpu-box",
            "--port",
            str(port),
            "--client-port",
            str(client),
            "--address",
            "127.0.0.1",
            "--",
            *ray_flags(tmp),
        ],
        tmp / "home",
    )
    lines = []
    deadline = time.monotonic() + 150
    while not any(line.startswith("Ray Client (") for line in lines):
        assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
        lines.append(proc.stdout.readline())
    yield [line.rstrip("\n") for line in lines], tmp / "home", port, client
    end(proc)


@pytest.fixture(scope="module")
def open_cluster(tmp_path_factory):
    """Ray's own `ray start --head --block`, as the README used to say: no token authentication. Its GCS address."""
    tmp = tmp_path_factory.mktemp("open")
    port, client = free_port(), free_port()
    proc = start(
        [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            "--head",
            "--block",
            "--port",
            str(port),
            "--ray-client-server-port",
            str(client),
            "--disable-usage-stats",
            *ray_flags(tmp),
        ],
        tmp / "home",
        {"RAY_AUTH_MODE": "disabled"},
    )
    ports = [connect.parse(f"127.0.0.1:{port}"), connect.parse(f"ray://127.0.0.1:{client}")]

    def up() -> bool:
        assert proc.poll() is None, "the open head exited"
        return all(auth.accepts_without_token(a, timeout=2) for a in ports)  # Ray Client's server comes last

    wait_until(up, 150, "the open head's start", every=0.5)
    yield f"127.0.0.1:{port}", f"ray://127.0.0.1:{client}", tmp / "home"
    end(proc)


def test_cluster_head_makes_a_private_token_starts_with_it_and_prints_what_the_laptop_sets(guarded):
    lines, home, port, client = guarded
    token_file = home / ".ray" / "auth_token"
    assert lines[0] == f"Made a new token in {token_file}."
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600  # it runs code on the cluster: this user's only
    token = token_file.read_text()
    assert f"  export RAY_AUTH_MODE=token RAY_AUTH_TOKEN={token}" in lines
    assert f"  export TFDASH_RAY_ADDRESS=ray://127.0.0.1:{client}" in lines
    assert any("nothing is encrypted" in line for line in lines)
    # Both ports refuse a request without the token and answer one with it.
    for text in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{client}"):
        address = connect.parse(text)
        assert auth.accepts_without_token(address) is False
        assert auth._answers(address, token) is True and auth._answers(address, "0" * 64) is False


def test_a_laptop_without_the_token_or_with_a_wrong_one_is_told_at_once(guarded):
    _, home, port, client = guarded
    for env, says in (
        ({}, "this machine has no token for it"),
        ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64}, "it refused this machine's token"),
    ):
        done = run_cli(  # at once: a hung ray.init would raise TimeoutExpired after 30 s
            "devices",
            "--ray",
            f"ray://127.0.0.1:{client}",
            env={"HOME": str(home.parent / "laptop"), **env},
            timeout=30,
        )
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines() == [
            f"error: The Ray cluster at ray://127.0.0.1:{client} has token authentication and {says}: set "
            "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN to the token `python -m core cluster-head` printed on the GPU box "
            "(or copy its ~/.ray/auth_token here)."
        ]


def test_a_cluster_that_takes_work_without_a_token_is_refused_on_the_cli_and_the_page(open_cluster, monkeypatch):
    from core.machine import hardware_check
    from tests.test_app import page
    from ui import access

    gcs, client, home = open_cluster
    for text in (gcs, client):
        done = run_cli("devices", "--ray", text, env={"HOME": str(home)})
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines() == [f"error: {auth.unauthenticated_sentence(text)}"]
    # The page: one sentence in Devices, nothing of the cluster offered; the address only on the presenter's page.
    monkeypatch.setenv(connect.ADDRESS_ENV, client)
    monkeypatch.setattr(hardware_check, "_cluster", hardware_check.ClusterProber())
    hardware_check.start()
    hw = hardware_check.wait_cluster(60)
    assert hw.cluster.startswith(auth.unauthenticated_sentence(client)) and hw.nodes == ()
    assert connect.connected() is None
    presenter = " ".join(c.value for c in page("Devices").caption)
    assert "accepts work without a token" in presenter and client.removeprefix("ray://").split(":")[1] in presenter
    monkeypatch.setenv(access.TOKEN_ENV, "a-token-for-make-share")  # `make share`: this page is a viewer
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP

    viewer = page("Devices", AppTest.from_file(APP, default_timeout=60).run())
    said = " ".join(c.value for c in viewer.caption)
    assert "accepts work without a token" in said and "127.0.0.1" not in said and str(client.split(":")[-1]) not in said


def test_allowed_explicitly_an_open_cluster_is_used_with_a_warning_on_every_page(open_cluster, monkeypatch):
    from core.machine import hardware_check
    from tests.test_app import page

    gcs, _, _ = open_cluster
    monkeypatch.setenv(connect.ADDRESS_ENV, gcs)
    monkeypatch.setenv(auth.ALLOW_ENV, "1")
    monkeypatch.setattr(hardware_check, "_cluster", hardware_check.ClusterProber())
    hardware_check.start()
    try:
        hw = hardware_check.wait_cluster(120)
        assert [n["name"] for n in hw.nodes] and hw.cluster.startswith(f"Ray cluster at {gcs}: 1 node(s)")
        at = page("Train")
        for view in ("Train", "History", "Devices"):
            at = page(view, at)
            assert [w.value for w in at.warning][:1] == [connect.warning()], view
            assert re.search(r"accepts work without a token", at.warning[0].value)
    finally:
        connect.disconnect()
