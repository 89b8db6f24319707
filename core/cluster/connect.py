"""Connecting this process to a Ray cluster: the address, a bounded connect, and one sentence for each failure.

A cluster that accepts work without a token (Ray's `ray start --head` unless RAY_AUTH_MODE=token and a token
exist) is refused before ray.init, unless the person allows it ($TFDASH_RAY_ALLOW_UNAUTHENTICATED=1, or
--ray-allow-unauthenticated), and then every page and command warns. `python -m core cluster-head`
(core/cli/cluster.py) starts a head with token authentication.

`ray.init` to an address where nothing answers retries for minutes, so a TCP check with a short
timeout comes first, and ray.init itself runs on a thread that is given up on after INIT_TIMEOUT_S.
Ray Client (`ray://`) needs the same Ray and Python (major.minor) on both sides; Ray checks that and
refuses, and the refusal becomes one sentence here, like a refused token (Ray's token authentication).
"""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

from core.cluster import auth, messages

ADDRESS_ENV = "TFDASH_RAY_ADDRESS"
ADDRESS_FORMS = messages.FORMS
TCP_TIMEOUT_S = 3.0  # a host that answers at all answers a TCP connect well within this
INIT_TIMEOUT_S = 30.0  # ray.init on a reachable address: connecting and shipping the core package
CORE_DIR = Path(__file__).resolve().parents[1]  # the `core` package, shipped to every node (runtime_env py_modules)
_ADDRESS_RE = re.compile(r"^(ray://)?([A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})$")

_lock = threading.Lock()
_connected: str | None = None
_unauthenticated = False  # the cluster connected to accepts work without a token (allowed by ALLOW_ENV)
_dashboard: str | None = None  # Ray's own dashboard for the cluster, as ray.init reported it


class ClusterError(RuntimeError):
    """The cluster cannot be used; the message is the one sentence a person reads."""


@dataclass(frozen=True)
class Address:
    """A parsed cluster address: `auto`, or a host and port, through Ray Client or not."""

    text: str
    host: str | None = None
    port: int | None = None
    client: bool = False


def configured(flag: str | None = None) -> str | None:
    """The cluster address from --ray (flag) or TFDASH_RAY_ADDRESS, or None when no cluster is named."""
    value = flag if flag is not None else os.environ.get(ADDRESS_ENV)
    return value.strip() or None if value else None


def parse(text: str) -> Address:
    """'auto', 'HOST:PORT' or 'ray://HOST:PORT' -> Address; ClusterError naming the setting otherwise."""
    text = text.strip()
    if text == "auto":
        return Address(text)
    match = _ADDRESS_RE.match(text)
    if not match or not 1 <= int(match.group(3)) <= 65535:
        raise ClusterError(messages.BAD_ADDRESS.format(env=ADDRESS_ENV, forms=ADDRESS_FORMS, text=repr(text)))
    client, host, port = match.groups()
    return Address(text, host.strip("[]"), int(port), bool(client))


def check_reachable(address: Address, timeout: float = TCP_TIMEOUT_S) -> None:
    """A TCP connect to the address within `timeout` (name lookup included); ClusterError if none."""
    if address.host is None:
        return  # auto: Ray finds the local cluster from its own files, and says at once if there is none

    def attempt() -> None:
        with socket.create_connection((address.host, address.port), timeout=timeout):
            pass

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        pool.submit(attempt).result(timeout=timeout + 0.5)  # bounds the name lookup too
    except socket.gaierror:
        raise ClusterError(messages.UNKNOWN_HOST.format(host=repr(address.host), env=ADDRESS_ENV)) from None
    except ConnectionRefusedError:
        raise ClusterError(
            messages.NOTHING_LISTENS.format(host=address.host, port=address.port, env=ADDRESS_ENV)
        ) from None
    except (FutureTimeout, TimeoutError, OSError) as err:
        why = getattr(err, "strerror", None) or "no answer"
        seconds = f"{timeout:.0f}"
        raise ClusterError(
            messages.NO_ANSWER.format(host=address.host, port=address.port, env=ADDRESS_ENV, seconds=seconds, why=why)
        ) from None
    finally:
        pool.shutdown(wait=False)


def warning() -> str | None:
    """The warning every page and command says while this process uses a cluster that needs no token."""
    if _connected is None or not _unauthenticated:
        return None
    return messages.OPEN_WARNING.format(env=auth.ALLOW_ENV, safe=auth.SAFE_START)


def _sentence(err: BaseException, address: Address) -> str:
    """One sentence for a failed ray.init, by what Ray said (its ConnectionError wraps the cause: a refused token)."""
    chain, cause = [], err
    while cause is not None and len(chain) < 5:
        chain.append(str(cause))
        cause = cause.__cause__ or cause.__context__
    text = " ".join(chain)
    first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
    if type(err).__name__ == "AuthenticationError" or "InvalidAuthToken" in text or "authentication" in text.lower():
        return messages.TOKEN_REFUSED.format(address=address.text)
    if "version mismatch" in text.lower() or "versions" in text.lower() and "match" in text.lower():
        import ray

        here = f"Ray {ray.__version__} with Python {sys.version_info[0]}.{sys.version_info[1]}"
        return messages.VERSIONS.format(address=address.text, here=here, first=first)
    return messages.NO_CONNECTION.format(address=address.text, error=f"{type(err).__name__}: {first}")


def connect(text: str | None = None, timeout: float = INIT_TIMEOUT_S) -> str:
    """Connect this process to the cluster (once; later calls return at once); its address, or ClusterError."""
    global _connected
    text = configured(text)
    if text is None and _connected is not None:
        return _connected  # a job on a node, in a process that connected already (the page, a test)
    if text is None:
        raise ClusterError(messages.NONE_NAMED.format(env=ADDRESS_ENV, forms=ADDRESS_FORMS))
    address = parse(text)
    with _lock:
        if _connected is not None:
            if _connected != address.text:
                raise ClusterError(messages.OTHER_CLUSTER.format(connected=_connected, address=address.text))
            return _connected
        check_reachable(address)
        # Ray's C++ client logs each failed retry to stderr; its sentence below is what a person reads.
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
        import ray

        open_door = auth.accepts_without_token(address)
        if open_door is False and (problem := auth.token_problem(address)):
            raise ClusterError(problem)
        if open_door and not auth.allowed_unauthenticated():
            raise ClusterError(auth.unauthenticated_sentence(address.text))

        outcome: list[BaseException | None] = []

        def init() -> None:
            try:
                context = ray.init(
                    address=address.text,
                    runtime_env={"py_modules": [str(CORE_DIR)]},  # the node needs only the requirements
                    log_to_driver=False,  # the nodes' TensorFlow chatter stays in Ray's logs
                    logging_level="ERROR",
                )
                global _dashboard
                _dashboard = getattr(context, "dashboard_url", None) or None
                outcome.append(None)
            except BaseException as err:  # noqa: BLE001 - any failure becomes the one sentence below
                outcome.append(err)

        thread = threading.Thread(target=init, name="ray-connect", daemon=True)
        thread.start()
        thread.join(timeout)
        if not outcome:
            raise ClusterError(messages.SLOW_CONNECT.format(address=address.text, seconds=f"{timeout:.0f}"))
        if outcome[0] is not None:
            raise ClusterError(_sentence(outcome[0], address))
        global _unauthenticated
        # Asked and told, or (not askable) connected with no token of ours at all: the cluster needs none.
        _unauthenticated = bool(open_door) or (open_door is None and os.environ.get("RAY_AUTH_MODE") != "token")
        if _unauthenticated and not auth.allowed_unauthenticated():
            ray.shutdown()
            raise ClusterError(auth.unauthenticated_sentence(address.text))
        _connected = address.text
        return _connected


def connected() -> str | None:
    """The address this process is connected to, or None."""
    return _connected


def disconnect() -> None:
    """Leave the cluster (tests, and a server shutting down)."""
    global _connected, _unauthenticated
    with _lock:
        if _connected is not None:
            import ray

            ray.shutdown()
            _connected, _unauthenticated = None, False


def dashboard_url() -> str | None:
    """Ray's own dashboard for the cluster (http://HOST:8265), when connected and the cluster runs one."""
    if _connected is None or not _dashboard:
        return None
    return _dashboard if _dashboard.startswith("http") else f"http://{_dashboard}"
