"""Who a Ray cluster lets in: whether it takes a request without a token, whether it takes this machine's token.

Ray 2.60's `ray start --head` has no authentication unless RAY_AUTH_MODE=token and a token exist; such a cluster
runs anyone's code. core.cluster.connect refuses it (unless ALLOW_ENV allows it), and asks here first, before
ray.init: a plain gRPC channel, without Ray's interceptors, so nothing of this process's token is sent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from core.cluster import messages

Address = Any  # core.cluster.connect.Address: text, host, port, client (not imported: connect imports this module)

TCP_TIMEOUT_S = 3.0  # as core.cluster.connect's: a host that answers at all answers well within this
ALLOW_ENV = "TFDASH_RAY_ALLOW_UNAUTHENTICATED"  # =1 (or --ray-allow-unauthenticated): use a cluster without a token
ALLOW_FLAG = "--ray-allow-unauthenticated"
SAFE_START = "python -m core cluster-head"  # the GPU box's one command: a cluster with token authentication


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


def token_problem(address: Address) -> str | None:
    """For a cluster that refuses a request without a token: the sentence when this machine lacks the token or has
    a wrong one (ray.init would only retry until its timeout), else None."""
    token = this_token()
    if token is not None and _answers(address, token) is not False:
        return None
    return (messages.NO_TOKEN_HERE if token is None else messages.WRONG_TOKEN).format(
        address=address.text, safe=SAFE_START
    )


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
    return messages.OPEN_CLUSTER.format(address=address, safe=SAFE_START, flag=ALLOW_FLAG, env=ALLOW_ENV)


def allowed_unauthenticated() -> bool:
    """Whether the person asked to use a cluster without token authentication ($TFDASH_RAY_ALLOW_UNAUTHENTICATED=1)."""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")
