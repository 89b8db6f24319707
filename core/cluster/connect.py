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

ADDRESS_ENV = "TFDASH_RAY_ADDRESS"
ALLOW_ENV = "TFDASH_RAY_ALLOW_UNAUTHENTICATED"  # =1 (or --ray-allow-unauthenticated): use a cluster without a token
ALLOW_FLAG = "--ray-allow-unauthenticated"
SAFE_START = "python -m core cluster-head"  # the GPU box's one command: a cluster with token authentication
ADDRESS_FORMS = "auto, HOST:PORT (a node's Ray address, port 6379 by default) or ray://HOST:PORT (Ray Client, 10001)"
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
        raise ClusterError(f"{ADDRESS_ENV} (or --ray) must be {ADDRESS_FORMS}, not {text!r}.")
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
        raise ClusterError(f"The Ray cluster's host {address.host!r} ({ADDRESS_ENV}) is not known here.") from None
    except ConnectionRefusedError:
        raise ClusterError(
            f"Nothing listens at {address.host}:{address.port} ({ADDRESS_ENV}): is the Ray cluster started "
            f"(ray start --head) and is that its port?"
        ) from None
    except (FutureTimeout, TimeoutError, OSError) as err:
        why = getattr(err, "strerror", None) or "no answer"
        raise ClusterError(
            f"The Ray cluster at {address.host}:{address.port} ({ADDRESS_ENV}) did not answer within "
            f"{timeout:.0f} s ({why})."
        ) from None
    finally:
        pool.shutdown(wait=False)


def accepts_without_token(address: Address, timeout: float = TCP_TIMEOUT_S) -> bool | None:
    """Whether the cluster answers a request that carries no token (None: it could not be asked).

    A plain gRPC channel, without Ray's interceptors, so nothing of this process's token is sent: Ray Client's
    ClusterInfo for ray://, the GCS's GetClusterId for the main port. With token authentication both answer
    UNAUTHENTICATED; without it, both answer (a process with no token had run `id` on such a cluster).
    """
    return _answers(address, None, timeout)


def _answers(address: Address, token: str | None, timeout: float = TCP_TIMEOUT_S) -> bool | None:
    """Whether the cluster answers a request with `token` (None: none) as Ray sends it; None if it cannot be asked."""
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc, ray_client_pb2, ray_client_pb2_grpc

    target = _target(address)
    if target is None:
        return None
    metadata = [("authorization", f"Bearer {token}")] if token else None
    channel = grpc.insecure_channel(target)
    try:
        if address.client:
            ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
            ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(ping, timeout=timeout, metadata=metadata)
        else:
            gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetClusterId(
                gcs_service_pb2.GetClusterIdRequest(), timeout=timeout, metadata=metadata
            )
        return True
    except grpc.RpcError as err:
        return False if err.code() == grpc.StatusCode.UNAUTHENTICATED else None
    finally:
        channel.close()


def this_token() -> str | None:
    """The token this process would send (RAY_AUTH_MODE=token and $RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH or
    ~/.ray/auth_token, as Ray reads it), or None."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return None
    if token := os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return token
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token").expanduser()
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def check_token(address: Address) -> bool | None:
    """Whether the cluster accepts work without a token (True), needs one this process has (False); ClusterError if
    it needs one this process lacks or has wrong; None if it could not be asked (ray.init then says what it finds)."""
    open_door = accepts_without_token(address)
    if open_door is not False:
        return open_door
    token = this_token()
    if token is None or _answers(address, token) is False:
        lacking = "this machine has no token for it" if token is None else "it refused this machine's token"
        raise ClusterError(
            f"The Ray cluster at {address.text} has token authentication and {lacking}: set RAY_AUTH_MODE=token and "
            f"RAY_AUTH_TOKEN to the token `{SAFE_START}` printed on the GPU box (or copy its ~/.ray/auth_token here)."
        )
    return False


def _target(address: Address) -> str | None:
    """HOST:PORT to ask: the address itself, or for `auto` the local cluster's GCS as Ray finds it."""
    if address.host is not None:
        host = f"[{address.host}]" if ":" in address.host else address.host
        return f"{host}:{address.port}"
    try:
        from ray._private.services import canonicalize_bootstrap_address

        return canonicalize_bootstrap_address("auto")
    except Exception:  # noqa: BLE001 - no local cluster: ray.init says so in its own sentence
        return None


def unauthenticated_sentence(address: str) -> str:
    """Why a cluster without token authentication is refused, and how to start one safely or allow it."""
    return (
        f"The Ray cluster at {address} accepts work without a token: anyone who can reach its ports can run code "
        f"there. Start it with `{SAFE_START}` on the GPU box (token authentication), or use it anyway with "
        f"{ALLOW_FLAG} ({ALLOW_ENV}=1)."
    )


def warning() -> str | None:
    """The warning every page and command says while this process uses a cluster that needs no token."""
    if _connected is None or not _unauthenticated:
        return None
    return (
        f"Warning: the Ray cluster in use accepts work without a token ({ALLOW_ENV}=1): anyone on "
        f"its network can run code there. `{SAFE_START}` starts one with token authentication."
    )


def allowed_unauthenticated() -> bool:
    """Whether the person asked to use a cluster without token authentication ($TFDASH_RAY_ALLOW_UNAUTHENTICATED=1)."""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")


def _sentence(err: BaseException, address: Address) -> str:
    """One sentence for a failed ray.init, by what Ray said (its ConnectionError wraps the cause: a refused token)."""
    chain, cause = [], err
    while cause is not None and len(chain) < 5:
        chain.append(str(cause))
        cause = cause.__cause__ or cause.__context__
    text = " ".join(chain)
    first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
    if type(err).__name__ == "AuthenticationError" or "InvalidAuthToken" in text or "authentication" in text.lower():
        return (
            f"The Ray cluster at {address.text} refused this machine's token: copy the cluster's "
            f"~/.ray/auth_token here (or set RAY_AUTH_TOKEN) and RAY_AUTH_MODE=token."
        )
    if "version mismatch" in text.lower() or "versions" in text.lower() and "match" in text.lower():
        import ray

        here = f"Ray {ray.__version__} with Python {sys.version_info[0]}.{sys.version_info[1]}"
        return f"The Ray cluster at {address.text} runs other versions than this machine ({here}): they must match ({first})."
    return f"Could not connect to the Ray cluster at {address.text} ({type(err).__name__}: {first})."


def connect(text: str | None = None, timeout: float = INIT_TIMEOUT_S) -> str:
    """Connect this process to the cluster (once; later calls return at once); its address, or ClusterError."""
    global _connected
    text = configured(text)
    if text is None and _connected is not None:
        return _connected  # a job on a node, in a process that connected already (the page, a test)
    if text is None:
        raise ClusterError(f"No Ray cluster is named: set {ADDRESS_ENV} (or --ray) to {ADDRESS_FORMS}.")
    address = parse(text)
    with _lock:
        if _connected is not None:
            if _connected != address.text:
                raise ClusterError(f"This process is connected to the Ray cluster at {_connected}, not {address.text}.")
            return _connected
        check_reachable(address)
        # Ray's C++ client logs each failed retry to stderr; its sentence below is what a person reads.
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
        import ray

        open_door = check_token(address)
        if open_door and not allowed_unauthenticated():
            raise ClusterError(unauthenticated_sentence(address.text))

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
            raise ClusterError(f"The Ray cluster at {address.text} did not finish connecting within {timeout:.0f} s.")
        if outcome[0] is not None:
            raise ClusterError(_sentence(outcome[0], address))
        global _unauthenticated
        # Asked and told, or (not askable) connected with no token of ours at all: the cluster needs none.
        _unauthenticated = bool(open_door) or (open_door is None and os.environ.get("RAY_AUTH_MODE") != "token")
        if _unauthenticated and not allowed_unauthenticated():
            ray.shutdown()
            raise ClusterError(unauthenticated_sentence(address.text))
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
