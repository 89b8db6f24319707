"""The runs of one comparison take turns: each in a worker of its own, one part at a time, round-robin.

Why: a comparison's headline is the ratio of two runs' speeds, and a machine's speed drifts: a laptop
heats up and throttles over a minute of load, a VM's neighbours come and go. Run one after the other,
the first run meets one stretch of that drift and the second another, and the ratio moves with it.
Taking turns epoch by epoch, both meet the same stretches, as an A/B benchmark's ABAB order does.
What it cannot remove is noise that hits two workloads differently: on the 2-core VM this was built
on, each epoch of the multi-step loop runs at a pace of its own, so a headline from two steady epochs
spread over five presses by ±10-20% either way, taking turns or not (bench/headline_stability.py
--also-one-after-another). The Quick demo now has five steady epochs (core.config): ±5-13%.

Each run is still timed alone: the workers not holding the turn are blocked on their pipe, idle; a run's
setup goes with its epoch 1, and the device's peak and floor measurements open its epoch 2's turn
(core.engine.training). Stop is as quick as for one run: a worker waiting for its turn wakes on stop and
ends at once.

The parent's side only: the worker's side is take_turn() in core.runner.worker. No TensorFlow here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from threading import Event
from typing import Any

from core.runner.worker import POLL_SECONDS, STOP_GRACE_SECONDS, Worker


@dataclass
class Turn:
    """One run of the comparison, in its worker."""

    worker: Worker
    job: Callable[..., Any]
    config: Any
    run_id: str
    stop: Event
    on_item: Callable[[Any, Any], None]
    ending: tuple | None = None  # as Worker.run's: ("done", ...), ("stopped",) or ("died",)
    wants: bool = False  # it asked for a turn and waits for go
    stop_asked: float | None = None


def alternate(turns: Sequence[Turn], on_end: Callable[[Turn], None]) -> None:
    """Run every turn's job in its worker, one at a time, in order (A B A B ...); on_end(turn) as each ends."""
    holder: Turn | None = None
    last = -1

    def end(turn: Turn, ending: tuple) -> None:
        nonlocal holder
        turn.ending = ending
        if holder is turn:
            holder = None
        on_end(turn)

    for turn in turns:
        try:
            turn.worker.start(turn.job, turn.config, turn.run_id, turns=True)
        except OSError:
            end(turn, ("died",))
    while live := [t for t in turns if t.ending is None]:
        for turn in live:
            for message in _heard(turn):
                if message[0] == "item":
                    turn.on_item(message[1], message[2])
                elif message[0] == "turn":
                    turn.wants = True
                    if holder is turn:
                        holder = None
                elif message[0] in ("done", "died", "stopped"):
                    end(turn, message)
                    break
        # Strictly in order: the next run still going gets the turn once it asks (each asks, or ends, soon).
        following = [turns[(last + 1 + k) % len(turns)] for k in range(len(turns))]
        nxt = next((t for t in following if t.ending is None), None)
        if holder is None and nxt is not None and nxt.wants:
            holder, nxt.wants, last = nxt, False, turns.index(nxt)
            try:
                nxt.worker.go()
            except OSError:
                pass  # it died: the next look at its pipe says so
        conns = [t.worker.conn for t in turns if t.ending is None]
        if conns:
            wait(conns, POLL_SECONDS)


def _heard(turn: Turn) -> list[tuple]:
    """What the turn's worker said since the last look (a stop it is asked, or its end, as a message of ours)."""
    if turn.stop.is_set() and turn.stop_asked is None:
        turn.worker.stop()
        turn.stop_asked = time.monotonic()
    if turn.stop_asked is not None and time.monotonic() - turn.stop_asked > STOP_GRACE_SECONDS:
        turn.worker.kill()  # a step outlasted the grace period, as Worker.run ends it
        return [("stopped",)]
    heard = []
    try:
        while (message := turn.worker.receive(0)) is not None:
            heard.append(message)
            if message[0] == "done":
                break
    except EOFError:
        heard.append(("died",))
    return heard
