"""python -m core cluster-head: this machine (the GPU box) as a Ray cluster's head, with token authentication.

    python -m core cluster-head [--node-name gpu-box] [--port 6379] [--client-port 10001] [--block] [-- RAY START FLAGS]

Ray 2.60's `ray start --head` has no authentication unless RAY_AUTH_MODE=token is set and a token exists; started
as Ray's own docs show it, it ran anyone's code (issue 19). This makes the token if there is none (Ray's own
generator, 256 bits, written readable by this user only: $RAY_AUTH_TOKEN_PATH, else ~/.ray/auth_token), starts
`ray start --head` with RAY_AUTH_MODE=token, checks that a request without the token is refused, and prints
exactly what the laptop sets. --block stays in the foreground and stops the cluster on Ctrl-C (or SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from core.cli.common import EXIT_FAILED, EXIT_OK, Command, fail
from core.cluster.auth import accepts_without_token
from core.cluster.connect import Address
from core.polling import poll_until

READY_TIMEOUT_S = 90.0  # `ray start` on a cold disk: the GCS, the raylet, Ray Client's server


def token_path() -> Path:
    """Where Ray reads the token from: $RAY_AUTH_TOKEN_PATH, else ~/.ray/auth_token."""
    return Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token").expanduser()


def ensure_token() -> tuple[str, bool]:
    """(the cluster's token, whether it was made now): $RAY_AUTH_TOKEN, the token file, or a new one in the file."""
    if given := os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return given, False
    path = token_path()
    if path.is_file() and (kept := path.read_text(encoding="utf-8").strip()):
        return kept, False
    from ray._private.authentication.authentication_token_generator import generate_new_authentication_token

    token = generate_new_authentication_token()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # this user only: it runs code on the cluster
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token)
    return token, True


def wait_until_guarded(
    addresses: list[Address], proc: subprocess.Popen | None, timeout: float = READY_TIMEOUT_S
) -> bool | None:
    """Until every port answers: True if all refuse a request without the token, False if one takes it, None if
    one never answered (Ray Client's server starts a little after the main port)."""
    answers: dict[str, bool | None] = {a.text: None for a in addresses}

    def all_answered() -> bool:
        for address in addresses:
            if answers[address.text] is None:
                answers[address.text] = accepts_without_token(address, timeout=2)
        return all(a is not None for a in answers.values())

    if poll_until(all_answered, timeout, 0.5, lambda: proc is not None and proc.poll() is not None):
        return not any(answers.values())
    return None


def laptop_lines(host: str, client_port: int, port: int, token: str) -> list[str]:
    """What the laptop sets, what other nodes run, and what token authentication does not do."""
    return [
        "On the laptop (the same project, its requirements installed), set:",
        f"  export RAY_AUTH_MODE=token RAY_AUTH_TOKEN={token}",
        f"  export TFDASH_RAY_ADDRESS=ray://{host}:{client_port}",
        "Another GPU box joins the cluster with:",
        f"  RAY_AUTH_MODE=token RAY_AUTH_TOKEN={token} ray start --address {host}:{port}",
        f"Ray Client ({client_port}) and the cluster's main port ({port}) listen on every interface. Every request "
        "there needs the token, but nothing is encrypted: anyone who can read the network can read the token and "
        "the runs. Keep the token secret (it runs code here), and use a network you trust or an SSH tunnel.",
    ]


def cmd_cluster_head(args: argparse.Namespace) -> int:
    """Start a Ray head with token authentication and print what the laptop sets."""
    try:
        token, made = ensure_token()
    except OSError as err:
        return fail(f"The token file {token_path()} cannot be written ({err.strerror or err}).")
    print(
        f"{'Made a new token in' if made else 'Using the token from'} "
        f"{'$RAY_AUTH_TOKEN' if os.environ.get('RAY_AUTH_TOKEN') else token_path()}.",
        flush=True,
    )
    env = {**os.environ, "RAY_AUTH_MODE": "token"}
    if not os.environ.get("RAY_AUTH_TOKEN"):
        env["RAY_AUTH_TOKEN_PATH"] = str(token_path())
    ray_start = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--head",
        "--port",
        str(args.port),
        "--ray-client-server-port",
        str(args.client_port),
        "--disable-usage-stats",
        *(["--node-name", args.node_name] if args.node_name else []),
        *(["--block"] if args.block else []),
        *args.ray_flags,
    ]
    proc = subprocess.Popen(ray_start, env=env, stdout=subprocess.DEVNULL if args.block else None)
    if not args.block and proc.wait() != 0:
        return fail("ray start did not start the head; its messages are above.")
    ports = [Address("main port", "127.0.0.1", args.port), Address("Ray Client", "127.0.0.1", args.client_port, True)]
    guarded = wait_until_guarded(ports, proc if args.block else None)
    if guarded is not True:
        _stop(proc)
        why = "it takes requests without the token" if guarded is False else "it did not answer"
        return fail(
            f"The Ray head on ports {args.port} and {args.client_port} was stopped: {why}"
            f" (within {READY_TIMEOUT_S:.0f} s)."
        )
    print(
        f"\nThe Ray cluster's head runs here with token authentication (RAY_AUTH_MODE=token), node name "
        f"{args.node_name or socket.gethostname()}."
    )
    print("\n".join(laptop_lines(args.address or _this_address(), args.client_port, args.port, token)), flush=True)
    if not args.block:
        print("Stop it with: ray stop")
        return EXIT_OK
    signal.signal(signal.SIGTERM, lambda *_: _stop(proc))
    try:
        return EXIT_OK if proc.wait() in (0, -signal.SIGTERM, 128 + signal.SIGTERM) else EXIT_FAILED
    except KeyboardInterrupt:
        _stop(proc)
        return EXIT_OK


def _this_address() -> str:
    """This machine's address as Ray finds it (the one its default route uses)."""
    from ray._private.services import get_node_ip_address

    return get_node_ip_address()


def _stop(proc: subprocess.Popen) -> None:
    """End `ray start --block`, which ends the cluster's processes it started."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--node-name", help="the node's name in device strings (NODE/gpu:0); default: this host's")
    p.add_argument("--port", type=int, default=6379, help="the cluster's main port (GCS)")
    p.add_argument("--client-port", type=int, default=10001, help="Ray Client's port, which the laptop uses")
    p.add_argument("--address", help="the address the laptop reaches this machine at (default: Ray's own guess)")
    p.add_argument("--block", action="store_true", help="stay in the foreground; Ctrl-C stops the cluster")
    p.add_argument("ray_flags", nargs="*", metavar="-- RAY START FLAGS", help="passed on to ray start")


COMMAND = Command("start this machine as a Ray cluster's head, with token authentication", _flags, cmd_cluster_head)
