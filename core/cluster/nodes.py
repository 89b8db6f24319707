"""The cluster's alive nodes, the names a device string uses for them, and each node's devices.

A node is named in a device (`NODE/gpu:0`) by its Ray node name (`ray start --node-name gpu-box`;
by default the node's IP address) when no other alive node shares it, else by the first 8 hex
digits of its node id. Its devices come from one small task pinned to it (node-affinity
scheduling, no CPU reserved) that runs `python -m core devices --json` there: the listing
the node would print itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.cluster import messages
from core.cluster.connect import ADDRESS_ENV, ClusterError, connected

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
PROBE_TIMEOUT_S = 90.0  # a node's first TensorFlow import (and CUDA probing) on a cold disk
ID_DIGITS = 8


@dataclass(frozen=True)
class Node:
    """An alive node of the cluster, as Ray lists it."""

    node_id: str
    name: str  # what a device string calls it (see the module docstring)
    address: str
    cpus: int
    gpus: int
    accelerator: str | None = None  # Ray's accelerator_type label, e.g. H100


@dataclass(frozen=True)
class NodeDevices:
    """One node's answer to the probe: its host listing (as `python -m core devices --json`), or why not."""

    node: Node
    host: dict[str, Any] = field(default_factory=dict)
    message: str = ""

    @property
    def hostname(self) -> str:
        """The node's host name, as the node itself says it (its Ray name until the probe has answered)."""
        return str(self.host.get("hostname") or self.node.name)


def alive() -> list[Node]:
    """The cluster's alive nodes, head first, each with the name a device string uses for it."""
    import ray

    if connected() is None:
        raise ClusterError("This process is not connected to a Ray cluster.")
    raw = [n for n in ray.nodes() if n.get("Alive")]
    raw.sort(key=lambda n: "node:__internal_head__" not in n.get("Resources", {}))
    names = [str(n.get("NodeName") or n.get("NodeManagerAddress") or "").lower() for n in raw]
    found = []
    for n, name in zip(raw, names, strict=True):
        resources = n.get("Resources", {})
        # A name is a word of a device string and of the page's Markdown: anything else is named by its node id.
        unique = name and names.count(name) == 1 and _NAME.fullmatch(name)
        accelerator = next((k.split(":", 1)[1] for k in resources if k.startswith("accelerator_type:")), None)
        found.append(
            Node(
                node_id=n["NodeID"],
                name=name if unique else n["NodeID"][:ID_DIGITS],
                address=str(n.get("NodeManagerAddress", "")),
                cpus=int(resources.get("CPU", 0)),
                gpus=int(resources.get("GPU", 0)),
                accelerator=accelerator,
            )
        )
    return found


def find(name: str) -> Node:
    """The alive node a device string names (its name, or the start of its node id); ClusterError naming the choices."""
    nodes = alive()
    wanted = name.lower()
    for node in nodes:
        if node.name == wanted or (len(wanted) >= 6 and node.node_id.lower().startswith(wanted)):
            return node
    choices = ", ".join(n.name for n in nodes) or "none"
    raise ClusterError(messages.NOT_A_NODE.format(name=repr(name), choices=choices))


def _list_devices() -> dict[str, Any]:
    """On the node: `python -m core devices --json`, with the core package Ray shipped on the path."""
    import core

    root = str(Path(core.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    env.pop(ADDRESS_ENV, None)  # the node's own devices, even where the node names a cluster itself
    done = subprocess.run(
        [sys.executable, "-m", "core", "devices", "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1][:200]
        raise RuntimeError(f"python -m core devices failed there ({last})")
    return json.loads(done.stdout)


def probe(timeout: float = PROBE_TIMEOUT_S) -> list[NodeDevices]:
    """Every alive node's devices, asked in parallel, one task pinned to each; a node that fails says why."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = alive()
    task = ray.remote(num_cpus=0, max_retries=0)(_list_devices)
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n.node_id, soft=False)).remote() for n in nodes
    ]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout)
    answers = []
    for node, ref in zip(nodes, refs, strict=True):
        if ref not in ready:
            ray.cancel(ref, force=True)
            answers.append(
                NodeDevices(node, message=messages.NODE_SLOW.format(node=node.name, seconds=f"{timeout:.0f}"))
            )
            continue
        try:
            answers.append(NodeDevices(node, host=ray.get(ref)))
        except Exception as err:  # noqa: BLE001 - one node's failure is its row's sentence, not the page's
            first = (str(err).strip().splitlines() or [type(err).__name__])[-1][:200]
            answers.append(NodeDevices(node, message=messages.NODE_FAILED.format(node=node.name, first=first)))
    return answers
