"""`make share`: the dashboard for a room: viewers on every interface, one presenter holding a token.

    python -m ui.share [--port 8501] [--address 0.0.0.0]

Generates a random token (secrets.token_urlsafe), starts `streamlit run app.py` with it in $TFDASH_PRESENTER_TOKEN
(the environment, not the command line: `ps` shows every process's arguments to every user, while
/proc/PID/environ is readable by its owner only), waits until the server answers, then prints the two URLs
once, here: the viewer URL for the room and the presenter URL with ?token=... for this screen only. The
token is never written anywhere else. The room's address is the one this machine's default route uses,
found by connect() on a UDP socket, which picks a route and sends nothing (no packet, no DNS).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

from core.polling import poll_until
from ui.access import PARAM, TOKEN_ENV

ROOT = Path(__file__).resolve().parents[1]
WILDCARDS = ("0.0.0.0", "::")
KILL_AFTER_S = 10  # a server still up this long after SIGTERM is killed
ROUTE_PROBE = ("192.0.2.1", 9)  # TEST-NET-1 (RFC 5737), documentation only: connect() just picks the route


def lan_address() -> str | None:
    """This machine's IPv4 address on its default route, or None without a network; nothing is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(ROUTE_PROBE)  # UDP: no packet leaves until something is sent, and nothing is
            address = s.getsockname()[0]
        except OSError:  # no route at all (no Wi-Fi, no cable)
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")  # as .streamlit/config.toml's allowedHosts for `make run`


def command(address: str, port: int, shown: str | None) -> list[str]:
    """`streamlit run app.py` (the page behind ui/guard.py) listening on `address`; Streamlit's own welcome is off
    (its URLs would lack the token, and with a wildcard address it looks up this machine's public address on the
    internet). The server answers only to this machine's names and the address viewers type (server.allowedHosts):
    a page under another name, as DNS rebinding makes one, is refused."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.address", address]
    cmd += ["--server.port", str(port), "--logger.hideWelcomeMessage", "true"]
    names = dict.fromkeys([*LOCAL_NAMES, *([shown] if shown else []), *([] if address in WILDCARDS else [address])])
    for name in names:
        cmd += ["--server.allowedHosts", name]
    if shown:  # the address viewers type: accepted as an origin without any lookup
        cmd += ["--browser.serverAddress", shown]
    return cmd


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 90) -> bool:
    """Poll the server's health route (on this machine) until it answers; False if it exited or never did."""

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            return False

    return poll_until(healthy, timeout, 0.3, lambda: proc.poll() is not None)


def end_with(proc: subprocess.Popen) -> list[int]:
    """On SIGTERM (a service manager, a test) the server goes too, never left behind without its parent; the list
    gets the signal's number. The handler does not wait: it interrupts main's own proc.wait(), whose lock a second
    wait never gets (it sat out its whole timeout, 15 s, for a server gone in 0.2 s), and main's wait then returns
    as soon as the server has exited."""
    ended: list[int] = []

    def end(signum: int, _frame) -> None:
        ended.append(signum)
        proc.terminate()
        kill = threading.Timer(KILL_AFTER_S, proc.kill)  # a server that does not go in time is killed
        kill.daemon = True
        kill.start()

    signal.signal(signal.SIGTERM, end)
    return ended


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ui.share", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument("--address", default="0.0.0.0", help="where to listen (default: every IPv4 interface)")
    args = parser.parse_args(argv)
    token = secrets.token_urlsafe(24)  # 192 bits
    lan = lan_address() if args.address in WILDCARDS else args.address
    proc = subprocess.Popen(command(args.address, args.port, lan), cwd=ROOT, env={**os.environ, TOKEN_ENV: token})
    ended = end_with(proc)
    local = f"http://{'127.0.0.1' if args.address in WILDCARDS else args.address}:{args.port}"
    try:
        if not wait_until_up(local, proc):
            if ended:
                return 128 + ended[0]
            print("The dashboard did not start; its messages are above.", file=sys.stderr)
            proc.terminate()
            return proc.wait() or 1
        viewers = f"http://{lan}:{args.port}" if lan else None
        print("\n  Sharing the dashboard (Ctrl-C stops it).")
        if viewers:
            print(f"  Viewers, for the room (watch only):   {viewers}")
        else:
            print("  Viewers: no network found, so only this machine can open the dashboard.")
        print(f"  Presenter, this screen only, never on the projector:   {local}/?{PARAM}={token}\n", flush=True)
        code = proc.wait()
        return 128 + ended[0] if ended else code
    except KeyboardInterrupt:  # Ctrl-C reaches the server too (same process group); let it finish
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
