"""What a worker process and its parent say to each other, and how a job ends: one small dataclass per message.

Parent -> worker: Hello (the parent's sys.path, the kinds' warm-ups), then Start or Exit; Stop at any time during
the job; with turns, Go grants a turn. Worker -> parent: Ready once warmed up, an Item per finished epoch or sweep
point (or an epoch still training), WantsTurn before each part of a job that must run alone (with turns), then Done.

How a job ended, as the runner reads it from a worker or a Ray node: Done, Stopped (it outlasted STOP_GRACE_SECONDS
after Stop and was ended there), Died (its worker process) or Lost (its Ray node, with the sentence that says so).
Messages cross a pipe pickled (multiprocessing's Connection): each names its class by module, so both sides import
this one module; job functions and configs cross by reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A step cannot be interrupted (CNN batch 32768: ~12 s a step): a job that has not stopped this many seconds after
# being asked is ended with its worker (or its Ray actor); its finished epochs are already home.
STOP_GRACE_SECONDS = 1.5


# -- parent -> worker ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Hello:
    """The first word: the parent's import path (job functions import from the same modules) and the warm-ups."""

    path: list[str]
    warm_ups: list[Callable[[], None]]
    parent_pid: int | None = None  # the runner's process: a run counts its CPU as its own (core.engine.load)


@dataclass(frozen=True)
class Start:
    """The worker's one job; with turns, it asks (WantsTurn) and waits for Go before each part that runs alone."""

    job: Callable[..., Any]
    config: Any
    run_id: str
    turns: bool = False


@dataclass(frozen=True)
class Go:
    """The worker's turn: it has said WantsTurn and waits for this."""


@dataclass(frozen=True)
class Stop:
    """Stop at the next check (the job's should_stop() turns True); a worker waiting for its turn wakes."""


@dataclass(frozen=True)
class Exit:
    """No job after all: exit."""


# -- worker -> parent ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ready:
    """Warmed up (TensorFlow imported): a job sent now starts at once."""

    pid: int


@dataclass(frozen=True)
class Item:
    """A finished epoch or sweep point, with the result so far; or an epoch still training (result None)."""

    item: Any
    result: Any


@dataclass(frozen=True)
class WantsTurn:
    """The job's next part must run alone: the worker waits for Go."""


# -- how a job ended (Done is also the worker's last word) -------------------------------------------------------
@dataclass(frozen=True)
class Done:
    """The job function returned: its result, its state, and the error text if it raised."""

    result: Any
    state: str
    error: str | None = None


@dataclass(frozen=True)
class Stopped:
    """It outlasted STOP_GRACE_SECONDS after Stop, so its worker (or actor) was ended."""


@dataclass(frozen=True)
class Died:
    """Its worker process died (killed, crashed) or never got ready."""


@dataclass(frozen=True)
class Lost:
    """Its Ray node (or the actor on it) died or stopped answering mid-job."""

    sentence: str


Ending = Done | Stopped | Died | Lost


class StopGrace:
    """A job's Stop, asked once when should_stop() first says so, then given STOP_GRACE_SECONDS before it is ended."""

    def __init__(self, should_stop: Callable[[], bool], ask: Callable[[], None]) -> None:
        self._should_stop = should_stop
        self._ask = ask
        self.asked: float | None = None  # when Stop was asked (time.monotonic), None until then

    def overdue(self) -> bool:
        """Ask the job to stop once should_stop() says so; True once it has outlasted the grace since."""
        if self.asked is None and self._should_stop():
            self._ask()
            self.asked = time.monotonic()
        return self.asked is not None and time.monotonic() - self.asked > STOP_GRACE_SECONDS
