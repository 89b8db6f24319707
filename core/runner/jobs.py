"""A job as the runner holds it (Job) and as every view reads it (JobStatus, a snapshot)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from core.language import progress
from core.results import utc_now
from core.results.states import State
from core.runner import end_messages
from core.runner.protocol import Done, Ending, Lost, Stopped


@dataclass
class Job:
    """A submitted job; `result` fills in item by item (epoch or sweep point) while it runs."""

    run_id: str
    config: Any
    state: str = State.QUEUED  # queued, running, then the result's status
    result: Any = None  # a RunResult or SweepResult, as far as it got
    items: list[Any] = field(default_factory=list)  # finished epochs or points (core.runner.deltas)
    stop: threading.Event = field(default_factory=threading.Event)
    order: int = 0
    error_text: str | None = None  # set when the job function itself raised, or a listener failed
    failure: str | None = None  # a listener's failure (e.g. the history cannot be written): the job fails
    stopped_by: str | None = None  # who asked to stop it ("this page", "the presenter", "Ctrl-C")
    settled: bool = False  # over, and every listener has seen "finished" (the store has its final state)
    in_progress: Any = None  # the epoch still training: its calls so far (core.results.EpochInProgress), live only
    group: tuple[str, ...] = ()  # the run ids submitted with it, in order (itself included)
    takes_turns: bool = False  # its group's jobs run side by side, taking turns (core.runner.turns)
    note: str | None = None  # what the history does not hold yet (a locked or full file), said while the job goes on

    def fail(self) -> None:
        """Mark the job failed with its listener's sentence (call it with the runner's lock held)."""
        self.state = State.FAILED
        self.error_text = self.failure
        if self.result is not None and hasattr(self.result, "status"):
            self.result.status, self.result.error = State.FAILED, self.failure

    def status(self, position: int | None) -> JobStatus:
        """A snapshot (`position` in the queue while queued); call it with the runner's lock held."""
        # A config may say how its progress is counted (SweepConfig: points); training counts epochs.
        total = getattr(self.config, "progress_total", None) or getattr(self.config, "epochs", None)
        return JobStatus(
            run_id=self.run_id,
            state=self.state,
            position=position,
            done=len(self.items),
            total=total,
            items=tuple(self.items),
            result=self.result,
            error=self.failure or getattr(self.result, "error", None) or self.error_text,
            config=self.config,
            unit=getattr(self.config, "progress_unit", "epoch"),
            stopped_by=self.stopped_by,
            in_progress=self.in_progress if self.state == State.RUNNING else None,
            note=self.note,
            group=self.group or (self.run_id,),
            began=bool(self.items) or self.in_progress is not None,
        )


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
    note: str | None = None  # what the history does not hold yet (core.history.recorder), or None
    group: tuple[str, ...] = ()  # the run ids submitted with it, in order (itself included)
    began: bool = False  # its first item had started: epoch 1 had a call timed (a sweep tells only finished points)

    def describe(self) -> str:
        """'queued (position 2)', 'running (epoch 3 of 10)', 'running (point 2 of 5)', 'completed', ..."""
        if self.state == State.QUEUED:
            return f"queued (position {self.position})"
        if self.state == State.RUNNING:
            return f"running ({progress.in_progress(self.unit, self.done, self.total)})"
        return self.state


# -- how a job ended, from its worker's (or Ray node's) last word -------------------------------------
def ending(job: Job, said: Ending, worker: Any) -> tuple[Any, str]:
    """(result, state) from how a worker's or a Ray node's run ended (core.runner.protocol's endings)."""
    match said:
        case Done(result, state, error):
            job.error_text = error
            return result, state
        case Stopped():  # a step outlasted the grace period: the worker was ended
            return ended_early(job, State.CANCELLED, None), State.CANCELLED
        case Lost(sentence):  # the Ray node (or its actor) died mid-job: as a dead worker, named
            return interrupted(job, sentence)
    return interrupted(job, worker.how_it_ended())


def interrupted(job: Job, what_happened: str) -> tuple[Any, str]:
    """`interrupted`: what happened, when, and how many items were kept, as one sentence."""
    sentence = end_messages.ended_early(what_happened, getattr(job.config, "progress_unit", "epoch"), len(job.items))
    job.error_text = sentence
    return ended_early(job, State.INTERRUPTED, sentence), State.INTERRUPTED


def ended_early(job: Job, status: str, error: str | None) -> Any:
    """The last result the worker sent, marked as ended here (None if no item had arrived)."""
    result = job.result
    if result is not None and hasattr(result, "status"):
        result.status, result.error, result.finished_at = status, error, utc_now()
    return result
