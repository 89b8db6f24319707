"""The runs of one comparison take turns: each in a worker of its own, one part at a time, round-robin.

Why: a comparison's headline is the ratio of two runs' speeds, and a machine's speed drifts: a laptop
heats up and throttles over a minute of load, a VM's neighbours come and go. Run one after the other,
the first run meets one stretch of that drift and the second another, and the ratio moves with it.
Taking turns epoch by epoch, both meet the same stretches, as an A/B benchmark's ABAB order does.
What it cannot remove is noise that hits two workloads differently (bench/headline_stability.py
--also-one-after-another measures the headline's spread over presses, taking turns or not).

Each run is still timed alone: the workers not holding the turn are blocked on their pipe, idle; a run's
setup goes with its epoch 1, and the device's peak and floor measurements open its epoch 2's turn
(core.engine.training). Stop is as quick as for one run: a worker waiting for its turn wakes on stop and
ends at once.

A job alone is a group of one that never asks for a turn. The parent's side only: the worker's side is
_serve() in core.runner.worker. No TensorFlow here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from threading import Event
from typing import Any

from core.runner.protocol import Died, Done, Ending, Go, Item, Start, StopGrace, Stopped, WantsTurn
from core.runner.worker import POLL_SECONDS, Worker


@dataclass
class Turn:
    """One run of the group, in its worker."""

    worker: Worker
    job: Callable[..., Any]
    config: Any
    run_id: str
    stop: Event
    on_item: Callable[[Any, Any], None]
    takes_turns: bool = True  # False for a job alone: it never asks
    ending: Ending | None = None
    wants: bool = False  # it asked for a turn and waits for Go
    grace: StopGrace = field(init=False)

    def __post_init__(self) -> None:
        self.grace = StopGrace(self.stop.is_set, self.worker.stop)


def alternate(turns: Sequence[Turn], on_end: Callable[[Turn], None]) -> None:
    """Run every turn's job in its worker, one at a time, in order (A B A B ...); on_end(turn) as each ends."""
    holder: Turn | None = None
    last = -1

    def end(turn: Turn, ending: Ending) -> None:
        nonlocal holder
        turn.ending = ending
        if holder is turn:
            holder = None
        on_end(turn)

    for turn in turns:
        try:
            turn.worker.send(Start(turn.job, turn.config, turn.run_id, turns=turn.takes_turns))
        except OSError:
            end(turn, Died())
    while live := [t for t in turns if t.ending is None]:
        for turn in live:
            for message in _heard(turn):
                match message:
                    case Item(item, result):
                        turn.on_item(item, result)
                    case WantsTurn():
                        turn.wants = True
                        if holder is turn:
                            holder = None
                    case Done() | Died() | Stopped():
                        end(turn, message)
        # Strictly in order: the next run still going gets the turn once it asks (each asks, or ends, soon).
        following = [turns[(last + 1 + k) % len(turns)] for k in range(len(turns))]
        nxt = next((t for t in following if t.ending is None), None)
        if holder is None and nxt is not None and nxt.wants:
            holder, nxt.wants, last = nxt, False, turns.index(nxt)
            try:
                nxt.worker.send(Go())
            except OSError:
                pass  # it died: the next look at its pipe says so
        conns = [t.worker.conn for t in turns if t.ending is None]
        if conns:
            wait(conns, POLL_SECONDS)


def _heard(turn: Turn) -> list[Item | WantsTurn | Ending]:
    """What the turn's worker said since the last look, up to its end (its Done, or Stopped or Died as ours)."""
    if turn.grace.overdue():
        turn.worker.kill()  # a step outlasted the grace period: only ending its worker stops it
        return [Stopped()]
    heard: list[Item | WantsTurn | Ending] = []
    try:
        while (message := turn.worker.receive(0)) is not None:
            heard.append(message)
            if isinstance(message, Done):
                break
    except EOFError:
        heard.append(Died())
    return heard
