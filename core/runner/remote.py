"""A job on a Ray node: the same engine job function as a local worker runs, in a Ray actor pinned to the node.

The actor (one per job, ended after it, so its TensorFlow memory goes back as a local worker's does)
runs the job on a thread and keeps each epoch or sweep point until the driver's next poll, about
every POLL_SECONDS; the driver hands them to the runner's on_item, so the store writes them as they
finish and a crash of either side loses at most the item in progress. A GPU job asks Ray for
num_gpus (Ray sets CUDA_VISIBLE_DEVICES, so the node's gpu:0 is the one Ray gave), a CPU job for all
the node's CPUs, so no second job of ours shares the node and disturbs its timings.

run() answers as a local worker's job ends (core.runner.protocol): Done or Stopped, plus Lost (with its
sentence) when the node or its actor died mid-job.
"""

from __future__ import annotations

import copy
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from core.cluster import shipping
from core.cluster.connect import ClusterError, connect
from core.cluster.nodes import Node, find
from core.machine.device_spec import device_name
from core.polling import poll_until
from core.results import EpochInProgress
from core.results.states import State
from core.runner import end_messages
from core.runner.deltas import head
from core.runner.protocol import Done, Ending, Lost, StopGrace, Stopped

# Each poll takes the GIL from the training thread on the node: every 0.5 s costs ~1% of an epoch
# (bench/ray_overhead.py).
POLL_SECONDS = 0.5
STOP_CHECK_SECONDS = 0.05  # how often Stop is looked at between polls: a slow poll never slows a Stop
START_TIMEOUT_S = 60.0  # the node has the resources free and the actor's process starts
SILENT_TIMEOUT_S = 15.0  # polls unanswered this long: the node is gone, whatever Ray says yet


def local_config(config: Any) -> Any:
    """The config as the node runs it: its device(s) without the node's name."""
    if hasattr(config, "devices"):
        return replace(config, devices=tuple(device_name(d).local for d in config.devices))
    return replace(config, device=config.device_spec.local)


class RemoteJob:
    """The actor: runs one job on a thread and keeps its items for the driver's polls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Any] = []
        self._result: bytes | None = None  # the newest result so far without its items, pickled while the job waits
        self._done: tuple | None = None
        self._stop = threading.Event()

    def where(self) -> dict[str, Any]:
        """The node this actor runs on (its Ray node id) and the GPUs Ray gave it."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "ray_gpu_ids": [str(g) for g in ray.get_gpu_ids()]}

    def lacks(self, dataset: str) -> bool:
        """Whether this node cannot load `dataset` from its own disk."""
        return not shipping.available_here(dataset)

    def start(self, job: Callable[..., Any], config: Any, run_id: str, stamp: dict[str, Any], files: Any) -> None:
        """Start the job on a thread; `stamp` goes into the result's device info, `files` is a shipped dataset."""
        shipping.unpack(files)

        def on_item(item: Any, result: Any) -> None:
            if isinstance(item, EpochInProgress):
                return  # live only: a node's epochs come back whole, so its curve moves epoch by epoch
            with self._lock:
                self._items.append(point_as_asked(item, config))
                self._result = pickle.dumps(as_asked(head(result), config, stamp))  # the items go once

        def work() -> None:
            error_text = None
            try:
                result = as_asked(job(local_config(config), on_item, self._stop.is_set, run_id), config, stamp)
                state = getattr(result, "status", State.COMPLETED)
            except Exception as err:  # noqa: BLE001 - as core.runner.worker: said, never a dead actor
                result, state, error_text = None, State.FAILED, f"{type(err).__name__}: {err}"
            with self._lock:
                self._done = (pickle.dumps(result), state, error_text)

        threading.Thread(target=work, name="remote-job", daemon=True).start()

    def poll(self) -> tuple[list[Any], bytes | None, tuple | None]:
        """The items finished since the last poll, the newest result with them (else None), and the ending once there is
        one."""
        with self._lock:
            # Sent once: a poll every POLL_SECONDS that carried the whole result each time would cost the
            # node's CPU the very time it is measuring.
            items, self._items, result, self._result = self._items, [], self._result, None
            return items, result, self._done

    def stop(self) -> None:
        """Ask the job to stop at its next check."""
        self._stop.set()


def point_as_asked(item: Any, config: Any) -> Any:
    """A sweep's point under the device name the user gave ('node-b/cpu', not the node's own 'cpu'); an epoch as it
    is."""
    if not hasattr(item, "device") or not hasattr(config, "devices"):
        return item
    names = {device_name(d).local: d for d in config.devices}
    return replace(item, device=names.get(item.device, item.device))


def as_asked(result: Any, config: Any, stamp: dict[str, Any]) -> Any:
    """A copy of the result as the user asked (the node's name in the device) and where it ran: node id, host.

    A copy: the job is still filling in the original (a sweep looks its devices up by the node's own names).
    """
    if result is None:
        return None
    shown = copy.copy(result)
    shown.config = config.to_dict()
    if hasattr(result, "points"):  # a sweep: its devices and points by the names the user gave
        names = {device_name(d).local: d for d in config.devices}
        shown.devices = {names.get(k, k): v for k, v in result.devices.items()}
        shown.points = [point_as_asked(p, config) for p in result.points]
        return shown
    node, local = config.device_spec.node, config.device_spec.local
    hostname = (result.host or {}).get("hostname") or node
    shown.device = {
        **result.device,
        **stamp,
        "requested": config.device,
        "label": f"{node.upper()}/{local.upper()} on {hostname}",
    }
    return shown


def _resources(node: Node, config: Any) -> dict[str, Any]:
    """What the actor asks Ray for: the GPUs it trains on, else every CPU of the node."""
    devices = getattr(config, "devices", None) or (config.device,)
    locals_ = [device_name(d).local for d in devices]
    gpus = [d for d in locals_ if d.startswith("gpu")]
    if not gpus:
        return {"num_cpus": max(node.cpus, 1), "num_gpus": 0}
    wanted = node.gpus if any(d.endswith(":all") for d in gpus) else 1
    if wanted < 1 or node.gpus < 1:
        raise ClusterError(f"The Ray node {node.name} has no GPU; its devices are cpu only.")
    if any(d not in ("gpu", "gpu:0", "gpu:all") for d in gpus):
        # Ray sets CUDA_VISIBLE_DEVICES to the GPU it gives, which the job then sees as gpu:0.
        raise ClusterError(
            f"device on the Ray node {node.name} must be {node.name}/gpu:0 (the GPU Ray gives the job, "
            f"recorded as ray_gpu_ids) or {node.name}/gpu:all, not {', '.join(gpus)}."
        )
    return {"num_cpus": 1, "num_gpus": wanted}


def run(job: Callable[..., Any], config: Any, run_id: str, should_stop: Callable[[], bool], on_item) -> Ending:
    """Run one job on the node its config names, relaying each item to on_item(item, result) as it arrives."""
    import ray

    try:
        connect()
        node = find(config.node)
        options = _resources(node, config)
    except ClusterError as err:
        return Done(None, State.FAILED, str(err))
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    actor_class = ray.remote(max_restarts=0, max_concurrency=1)(RemoteJob)
    actor = actor_class.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False), **options
    ).remote()
    try:
        try:
            where = ray.get(actor.where.remote(), timeout=START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            slow = end_messages.NODE_SLOW["gpu" if options.get("num_gpus") else "cpu"]
            n = options.get("num_gpus") or options.get("num_cpus")
            sentence = slow.format(name=node.name, seconds=f"{START_TIMEOUT_S:.0f}", n=n)
            return Done(None, State.FAILED, sentence)
        except ray.exceptions.RayError:
            return Lost(end_messages.NODE_LOST.format(name=node.name))
        stamp = {"node": node.name, **where}
        # Ship the dataset only to a node that lacks it (tens of MB, over the network with Ray Client).
        files = shipping.pack(config.dataset) if ray.get(actor.lacks.remote(config.dataset), timeout=30) else None
        actor.start.remote(job, config, run_id, stamp, files)
        return _relay(actor, node, should_stop, on_item)
    finally:
        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone with its node
            pass


def _relay(actor, node: Node, should_stop: Callable[[], bool], on_item) -> Ending:
    """Poll the actor until the job ends, relaying items; the node's loss and an unanswered Stop end it here."""
    import ray

    grace = StopGrace(should_stop, actor.stop.remote)
    last_answer = time.monotonic()
    while True:
        if grace.overdue():
            return Stopped()  # run() ends the actor
        try:
            items, result, done = ray.get(actor.poll.remote(), timeout=max(POLL_SECONDS * 20, 1.0))
        except ray.exceptions.GetTimeoutError:
            if time.monotonic() - last_answer > SILENT_TIMEOUT_S:
                return Lost(end_messages.NODE_SILENT.format(name=node.name))
            continue
        except ray.exceptions.RayError:  # the actor died: its node was removed, crashed or ran out of memory
            return Lost(end_messages.NODE_LOST.format(name=node.name))
        last_answer = time.monotonic()
        current = pickle.loads(result) if result is not None else None  # without its items; None when none came
        for item in items:
            on_item(item, current)
        if done is not None:
            return Done(pickle.loads(done[0]), done[1], done[2])
        # Until the next poll, or at once when Stop is pressed; once stopping, poll often to see the end.
        if grace.asked is None:
            poll_until(should_stop, POLL_SECONDS, STOP_CHECK_SECONDS)
        else:
            time.sleep(STOP_CHECK_SECONDS)


def result_of(ending: Ending, last: Any) -> tuple[Any, str | None]:
    """(result, sentence) from run()'s ending, for a caller without a runner (the CLI); `last` is the newest result."""
    match ending:
        case Done(result, _, error):
            return result, error
        case Lost(sentence):
            status = State.INTERRUPTED
        case _:
            status, sentence = State.CANCELLED, None
    if last is not None:
        unit = "point" if hasattr(last, "points") else "epoch"
        done = len(getattr(last, "points", None) or getattr(last, "epochs", None) or [])
        sentence = sentence and end_messages.ended_early(sentence, unit, done)
        last.status, last.error = status, sentence
    return last, sentence
