"""A job's state: queued and running while it lives, then how it ended, as the history and every file store it."""

from __future__ import annotations

import enum


class State(str, enum.Enum):
    """Equal to, hashed and formatted as its word, so stored rows, files and JSON keep the plain strings."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # its worker or Ray node was lost mid-run; the epochs it finished are kept

    def __str__(self) -> str:
        return self.value


ACTIVE = (State.QUEUED, State.RUNNING)  # a job still in the runner's hands
ENDED = (State.COMPLETED, State.CANCELLED, State.FAILED, State.INTERRUPTED)  # how a job can end; what a file holds
