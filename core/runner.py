"""One training at a time: a first-come-first-served queue, each job in a worker process of its own.

The queue belongs to no browser session: closing a tab or rerunning a script neither stops nor
duplicates a run, and any session can find it again by its id. Jobs run in a worker process
(core.worker) that exits after its job, so this process's memory returns to its idle size; the
next worker is started at once and waits with TensorFlow imported. Listeners (the store) run
here, in this process, on the events the worker sends back: one writer for the history.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from core import progress
from core.jobs import Job, JobStatus, check_importable
from core.results import EpochInProgress, utc_now
from core.worker import STOP_GRACE_SECONDS, Worker

# A job kind: a module-level function (it crosses to the worker by name) run(config, on_item(item,
# result), should_stop() -> bool, run_id) -> result. Optional attributes: `admit(config)`, called
# here at submit, raises to refuse a job before it is queued (a run too big for the memory free);
# `warm_up()`, called by a fresh worker before it says it is ready (import TensorFlow). The caller
# passes the kinds it wants (core.engine.kinds.JOB_KINDS); the runner imports no engine.
JobKind = Callable[..., Any]
__all__ = ["Job", "JobKind", "JobStatus", "Listener", "Runner"]


Listener = Callable[[str, Job, Any], None]


class Runner:
    """A queue, one dispatcher thread and one worker process at a time: jobs run strictly one after another."""

    def __init__(self, kinds: dict[type, JobKind]) -> None:
        check_importable(kinds)
        self._kinds = dict(kinds)
        self._cond = threading.Condition()
        self._jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._current: Job | None = None
        self._counter = itertools.count()
        self._listeners: list[Listener] = []
        self._closed = False
        self._worker = Worker(self._kinds.values())  # warming up now, before anyone presses Run
        self._dispatcher = threading.Thread(target=self._work, name="training-runner", daemon=True)
        self._dispatcher.start()

    def close(self) -> None:
        """Stop the running job, drop the queue and end the worker (the Runner is unusable after)."""
        with self._cond:
            self._closed = True
            for job in [self._current, *self._queue]:
                if job is not None:
                    job.stop.set()
            self._cond.notify_all()
        self._dispatcher.join(STOP_GRACE_SECONDS + 15)
        self._worker.kill()
        self._worker.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- listeners (e.g. the store writing each epoch as it finishes) ------------
    def add_listener(self, listener: Listener) -> None:
        """listener(event, job, payload) for event in submitted, started, epoch (a sweep: point), finished."""
        self._listeners.append(listener)

    def _emit(self, event: str, job: Job, payload: Any = None) -> None:
        for listener in list(self._listeners):
            try:
                listener(event, job, payload)
            except Exception as err:  # noqa: BLE001 - a listener's failure is the job's, said, never swallowed
                self._listener_failed(job, err)

    def _listener_failed(self, job: Job, err: Exception) -> None:
        """A listener (the store, writing each epoch) failed: stop the job and say why; it ends `failed`."""
        sentence = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        with self._cond:
            if job.failure is None:
                job.failure = sentence
            job.stop.set()  # a run whose epochs cannot be kept stops at its next step, not hours later
            if job.state not in ("queued", "running"):  # it had already finished: the final write failed
                self._fail(job)
            self._cond.notify_all()

    @staticmethod
    def _fail(job: Job) -> None:
        """Mark a job failed with its listener's sentence (called with the lock held)."""
        job.state = "failed"
        job.error_text = job.failure
        if job.result is not None and hasattr(job.result, "status"):
            job.result.status, job.result.error = "failed", job.failure

    # -- the public API --------------------------------------------------------
    def submit(self, config: Any, run_id: str | None = None) -> str:
        """Queue a job and return its id at once; its kind's admit(config) may refuse it first (nothing queued)."""
        if type(config) not in self._kinds:
            raise TypeError(f"the runner cannot run a {type(config).__name__}")
        admit = getattr(self._kinds[type(config)], "admit", None)
        if admit is not None:
            admit(config)  # e.g. core.engine.memory.check: a run that cannot fit is refused, never stored
        job = Job(run_id=run_id or uuid.uuid4().hex[:12], config=config, order=next(self._counter))
        with self._cond:
            self._jobs[job.run_id] = job
            self._queue.append(job)
            self._cond.notify_all()
        self._emit("submitted", job)
        return job.run_id

    def cancel(self, run_id: str, by: str | None = None) -> bool:
        """Stop a running job (within a second or two) or drop a queued one; `by` says who asked. False if done."""
        with self._cond:
            job = self._jobs.get(run_id)
            if job is None or job.state not in ("queued", "running"):
                return False
            if not job.stop.is_set():
                job.stopped_by = by
            job.stop.set()
            if job.state == "queued":
                self._queue.remove(job)
                job.state = "cancelled"
                job.finished_at = time.time()
                self._cond.notify_all()
                cancelled_while_queued = True
            else:
                cancelled_while_queued = False
        if cancelled_while_queued:
            self._emit("finished", job)
            self._settle(job)
        return True

    def warm(self, timeout: float | None = None) -> bool:
        """Block until the worker for the next job has TensorFlow imported (True), or timeout / it died (False)."""
        return self._worker.wait_ready(timeout)

    def status(self, run_id: str) -> JobStatus | None:
        """Where a job stands, or None if this process has never seen it."""
        with self._cond:
            job = self._jobs.get(run_id)
            return None if job is None else self._snapshot(job)

    def jobs(self) -> list[JobStatus]:
        """Running and queued jobs, in the order they will run."""
        with self._cond:
            active = ([self._current] if self._current else []) + list(self._queue)
            return [self._snapshot(j) for j in active]

    def current(self) -> JobStatus | None:
        """The running job, if any."""
        with self._cond:
            return self._snapshot(self._current) if self._current else None

    def wait(self, run_id: str, timeout: float | None = None) -> JobStatus | None:
        """Block until the job has finished and its listeners have seen it (or timeout); return its status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                job = self._jobs.get(run_id)
                if job is None or job.settled:
                    return None if job is None else self._snapshot(job)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return self._snapshot(job)
                self._cond.wait(left)

    def _snapshot(self, job: Job) -> JobStatus:
        position = self._queue.index(job) + 1 if job in self._queue else None
        # A config may say how its progress is counted (SweepConfig: points); training counts epochs.
        total = getattr(job.config, "progress_total", None) or getattr(job.config, "epochs", None)
        error = job.failure or getattr(job.result, "error", None) or job.error_text
        return JobStatus(
            run_id=job.run_id,
            state=job.state,
            position=position,
            done=len(job.items),
            total=total,
            items=tuple(job.items),
            result=job.result,
            error=error,
            config=job.config,
            unit=getattr(job.config, "progress_unit", "epoch"),
            stopped_by=job.stopped_by,
            in_progress=job.in_progress if job.state == "running" else None,
        )

    # -- the dispatcher: hands each job to a worker process and relays its events ------------
    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job = self._queue.pop(0)
                job.state = "running"
                job.started_at = time.time()
                self._current = job
                self._cond.notify_all()
            self._emit("started", job)
            result, state = self._run_in_worker(job)
            with self._cond:
                job.result = result
                job.state = state
                job.finished_at = time.time()
                if job.failure is not None:  # stopped because a listener failed: failed, not cancelled
                    self._fail(job)
                self._current = None
                self._cond.notify_all()
            self._emit("finished", job)
            self._settle(job)

    def _settle(self, job: Job) -> None:
        # wait() returns only now, so a caller that reads the store next finds the job's final state there.
        with self._cond:
            job.settled = True
            self._cond.notify_all()

    def _relay(self, job: Job) -> Callable[[Any, Any], None]:
        """on_item(item, result) for a job: keep the item, then tell the listeners (the store writes it).
        An epoch still training (EpochInProgress) is only kept for the page, never told to the listeners."""
        event = getattr(job.config, "progress_unit", "epoch")  # "point" for a sweep

        def on_item(item: Any, result: Any) -> None:
            with self._cond:
                if isinstance(item, EpochInProgress):
                    job.in_progress = item
                    return
                job.items.append(item)
                job.result, job.in_progress = result, None
                self._cond.notify_all()
            self._emit(event, job, item)

        return on_item

    def _run_in_worker(self, job: Job) -> tuple[Any, str]:
        """Run one job in the waiting worker (or on its Ray node), relaying its items; (result, state) however it ended."""
        kind = self._kinds[type(job.config)]
        if getattr(job.config, "node", None):  # a Ray node's job: Ray is imported only now
            from core.cluster import remote

            return self._ending(job, remote.run(kind, job.config, job.run_id, job.stop.is_set, self._relay(job)), None)
        worker = self._worker
        if not worker.wait_ready():
            # It died while importing (e.g. killed): one fresh try, so a queued job is not lost to it.
            worker.close()
            worker = self._worker = Worker(self._kinds.values())
            if not worker.wait_ready():
                return self._worker_ended(job, worker)
        try:
            ending = worker.run(kind, job.config, job.run_id, job.stop, self._relay(job))
        finally:
            self._next_worker(worker)
        return self._ending(job, ending, worker)

    def _ending(self, job: Job, ending: tuple, worker: Worker | None) -> tuple[Any, str]:
        """(result, state) from how a worker's or a Ray node's run ended."""
        if ending[0] == "done":
            _, result, state, job.error_text = ending
            return result, state
        if ending[0] == "stopped":  # a step outlasted the grace period: the worker was ended
            return self._ended_early(job, "cancelled", None), "cancelled"
        if ending[0] == "lost":  # the Ray node (or its actor) died mid-job: as a dead worker, named
            return self._interrupted(job, ending[1])
        return self._worker_ended(job, worker)

    def _next_worker(self, finished: Worker) -> None:
        # The finished worker exits (its memory goes back); the next one starts importing at once.
        finished.close()
        if self._worker is finished and not self._closed:
            self._worker = Worker(self._kinds.values())

    def _worker_ended(self, job: Job, worker: Worker) -> tuple[Any, str]:
        """The worker died mid-job (killed, out of memory): `interrupted`, with one sentence and the items kept."""
        return self._interrupted(job, f"The worker process (pid {worker.pid}) {worker.how_it_ended()}")

    def _interrupted(self, job: Job, what_happened: str) -> tuple[Any, str]:
        """`interrupted`: what happened, when, and how many items were kept, as one sentence."""
        unit = getattr(job.config, "progress_unit", "epoch")
        when = f"after {unit} {len(job.items)}" if job.items else f"before its first {unit}"
        sentence = f"{what_happened} {when}; {progress.plural(unit, len(job.items))} kept."
        job.error_text = sentence
        return self._ended_early(job, "interrupted", sentence), "interrupted"

    @staticmethod
    def _ended_early(job: Job, status: str, error: str | None) -> Any:
        """The last result the worker sent, marked as ended here (None if no item had arrived)."""
        result = job.result
        if result is not None and hasattr(result, "status"):
            result.status, result.error, result.finished_at = status, error, utc_now()
        return result
