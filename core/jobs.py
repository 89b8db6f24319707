"""A job as the runner holds it (Job) and as every view reads it (JobStatus, a snapshot)."""

from __future__ import annotations

import pickle
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from core import progress


@dataclass
class Job:
    """A submitted job; `result` fills in item by item (epoch or sweep point) while it runs."""

    run_id: str
    config: Any
    state: str = "queued"  # queued, running, then the result's status
    submitted_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    result: Any = None  # a RunResult or SweepResult, as far as it got
    items: list[Any] = field(default_factory=list)  # finished epochs (EpochMetrics) or points (SweepPoint)
    stop: threading.Event = field(default_factory=threading.Event)
    order: int = 0
    error_text: str | None = None  # set when the job function itself raised, or a listener failed
    failure: str | None = None  # a listener's failure (e.g. the history cannot be written): the job fails
    stopped_by: str | None = None  # who asked to stop it ("this page", "the presenter", "Ctrl-C")
    settled: bool = False  # over, and every listener has seen "finished" (the store has its final state)
    in_progress: Any = None  # the epoch still training: its calls so far (core.results.EpochInProgress), live only


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of a job, safe to read from any thread."""

    run_id: str
    state: str
    position: int | None  # 1 = next to run, while queued
    done: int  # finished items: epochs of a training run, points of a sweep
    total: int | None
    items: tuple[Any, ...]  # EpochMetrics, or SweepPoints for a sweep
    result: Any
    error: str | None
    config: Any
    unit: str = "epoch"  # what an item is: "epoch", or "point" for a sweep
    stopped_by: str | None = None  # who asked to stop it; None when nobody did
    in_progress: Any = None  # while running: the epoch still training and its calls so far (EpochInProgress)

    def describe(self) -> str:
        """'queued (position 2)', 'running (epoch 3 of 10)', 'running (point 2 of 5)', 'completed', ..."""
        if self.state == "queued":
            return f"queued (position {self.position})"
        if self.state == "running":
            return f"running ({progress.in_progress(self.unit, self.done, self.total)})"
        return self.state


def check_importable(kinds: dict[type, Any]) -> None:
    """TypeError unless each job is a module-level function (a worker process imports it by name)."""
    for kind, job in kinds.items():
        try:
            pickle.dumps(job)
        except (pickle.PicklingError, AttributeError, TypeError):
            raise TypeError(
                f"The job for {kind.__name__} must be a module-level function, so a worker process can import it."
            ) from None
