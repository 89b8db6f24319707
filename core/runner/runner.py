"""One training at a time: a first-come-first-served queue, each job in a worker process of its own.

The queue belongs to no browser session: closing a tab or rerunning a script neither stops nor duplicates a run, and any
session can find it again by its id. Jobs run in a worker process (core.runner.worker) that exits after its job, so this
process's memory returns to its idle size; the next workers start once the job has ended and wait with TensorFlow
imported (core.runner.pool: as many as a comparison has runs, where memory holds them). Listeners (the store) run here,
in this process, on the events the worker sends back: one writer for the history.

A comparison's runs, submitted as a group (submit_group), start together and take turns epoch by epoch, each in its own
worker (core.runner.turns): still one training at a time, but both runs meet the same stretches of a machine's drift (a
laptop heating up), not one stretch each.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from core.results import EpochInProgress
from core.results.states import ACTIVE, State
from core.runner.deltas import grown
from core.runner.jobs import Job, JobStatus, ending
from core.runner.kind import JobKind, as_job_kind
from core.runner.pool import Pool, timed
from core.runner.protocol import STOP_GRACE_SECONDS, Died, Done, Ending
from core.runner.turns import Turn, alternate

Listener = Callable[[str, Job, Any], None]


class Runner:
    """A queue, one dispatcher thread and one training at a time: jobs run one after another, a group's taking turns."""

    def __init__(self, kinds: Mapping[type, JobKind | Callable[..., Any]], warm: int = 1, worker_jobs: int = 1) -> None:
        """kinds: config type -> its JobKind (core.runner.kind), or a bare job function. warm: how many workers wait
        with TensorFlow imported between jobs (core.runner.pool; the page's: one per run of a comparison, within
        core.engine.memory.warm_workers' budget). worker_jobs: how many jobs a worker runs before it exits."""
        self._kinds = {config_type: as_job_kind(config_type, given) for config_type, given in kinds.items()}
        self._cond = threading.Condition()
        # Counts what a page must show at once: a job queued, started, asked to stop or settled (never an epoch).
        self._changes, self._changed = 0, threading.Condition()
        self._jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._running: list[Job] = []  # one job, or a group's jobs taking turns
        self._counter = itertools.count()
        self._listeners: list[Listener] = []
        self._closed = False
        kinds = self._kinds.values()
        preload = tuple(dict.fromkeys(name for k in kinds for name in getattr(k, "preload", ())))
        self._pool = Pool([k.warm_up for k in kinds], warm, worker_jobs, preload)  # warming up now, before any Run
        self._dispatcher = threading.Thread(target=self._work, name="training-runner", daemon=True)
        self._dispatcher.start()

    def close(self) -> None:
        """Stop the running job, drop the queue and end the worker (the Runner is unusable after)."""
        with self._cond:
            self._closed = True
            for job in [*self._running, *self._queue]:
                job.stop.set()
            self._cond.notify_all()
        self._dispatcher.join(STOP_GRACE_SECONDS + 15)
        self._pool.close()

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
            if job.state not in ACTIVE:  # it had already finished: the final write failed
                job.fail()
            self._cond.notify_all()

    # -- the public API --------------------------------------------------------
    def submit(self, config: Any, run_id: str | None = None) -> str:
        """Queue a job and return its id at once; its kind's admit(config) may refuse it first (nothing queued)."""
        return self.submit_group([config], [run_id or uuid.uuid4().hex[:12]])[0]

    def submit_group(self, configs: list[Any], run_ids: list[str]) -> list[str]:
        """Queue jobs side by side: they take turns (core.runner.turns) where their kind allows and memory holds them
        all (local runs of one kind with fits_together), else one after another. admit() may refuse any: none queued."""
        for config in configs:
            if type(config) not in self._kinds:
                raise TypeError(f"the runner cannot run a {type(config).__name__}")
            self._kinds[type(config)].admit(config)  # core.engine.memory.check: a run that cannot fit is refused
        local = not any(getattr(c, "node", None) for c in configs) and len({type(c) for c in configs}) == 1
        fit = local and self._kinds[type(configs[0])].fits_together(configs, waiting=self._pool.size)
        group, turns = tuple(run_ids), len(configs) > 1 and fit
        pairs = zip(configs, run_ids, strict=True)
        jobs = [Job(i, c, order=next(self._counter), group=group, takes_turns=turns) for c, i in pairs]
        with self._cond:
            for job in jobs:
                self._jobs[job.run_id] = job
                self._queue.append(job)
            self._cond.notify_all()
        self._change()
        for job in jobs:
            self._emit("submitted", job)
        return run_ids

    def cancel(self, run_id: str, by: str | None = None) -> bool:
        """Stop a running job (within a second or two) or drop a queued one; `by` says who asked. False if done."""
        with self._cond:
            job = self._jobs.get(run_id)
            if job is None or job.state not in ACTIVE:
                return False
            if not job.stop.is_set():
                job.stopped_by = by
            job.stop.set()
            cancelled_while_queued = job.state == State.QUEUED
            if cancelled_while_queued:
                self._queue.remove(job)
                job.state = State.CANCELLED
                self._cond.notify_all()
        self._change()  # a running job says "stopping" until it ends
        if cancelled_while_queued:
            self._emit("finished", job)
            self._settle(job)
        return True

    def moment(self) -> int:
        """How many times a job was queued, started, asked to stop or settled (never an epoch): a page's cue."""
        with self._changed:
            return self._changes

    def wait_change(self, since: int, timeout: float) -> int:
        """Block until moment() differs from `since` or `timeout` seconds pass; the moment then."""
        with self._changed:
            self._changed.wait_for(lambda: self._changes != since, timeout)
            return self._changes

    def _change(self) -> None:
        with self._changed:
            self._changes += 1
            self._changed.notify_all()

    def warm(self, timeout: float | None = None) -> bool:
        """Block until the next job's workers wait with TensorFlow imported (True), or timeout / one died (False)."""
        return self._pool.wait_ready(timeout)

    def ready(self) -> bool:
        """Whether a job submitted now would start at once: nothing queued or running, the waiting workers ready."""
        with self._cond:
            if self._queue or self._running:
                return False
        return self._pool.ready()

    def status(self, run_id: str) -> JobStatus | None:
        """Where a job stands, or None if this process has never seen it."""
        with self._cond:
            job = self._jobs.get(run_id)
            return None if job is None else self._snapshot(job)

    def jobs(self) -> list[JobStatus]:
        """Running and queued jobs, in the order they will run."""
        with self._cond:
            return [self._snapshot(j) for j in [*self._running, *self._queue]]

    def current(self) -> JobStatus | None:
        """The running job (the first of a group taking turns), if any."""
        with self._cond:
            return self._snapshot(self._running[0]) if self._running else None

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
        return job.status(self._queue.index(job) + 1 if job in self._queue else None)

    # -- the dispatcher: hands each job to a worker process and relays its events ------------
    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job = self._queue.pop(0)
                group = [job] + ([j for j in self._queue if j.group == job.group] if job.takes_turns else [])
                for member in group:
                    if member is not job:
                        self._queue.remove(member)
                    member.state = State.RUNNING
                self._running = list(group)
                self._cond.notify_all()
            self._change()
            for member in group:
                self._emit("started", member)
            if getattr(job.config, "node", None):  # a Ray node's job: Ray is imported only now
                self._finish(job, *ending(job, self._run_on_node(job), None))
            else:
                self._run_in_workers(group)
            if not self._closed:
                self._pool.fill()  # the next job's workers start now, once this one has ended

    def _finish(self, job: Job, result: Any, state: str) -> None:
        """A job has ended (result, state): record it, tell the listeners, then let wait() return."""
        with self._cond:
            job.result = result
            job.state = state
            if job.failure is not None:  # stopped because a listener failed: failed, not cancelled
                job.fail()
            self._running.remove(job)
            self._cond.notify_all()
        self._emit("finished", job)
        self._settle(job)

    def _settle(self, job: Job) -> None:
        # wait() returns only now, so a caller that reads the store next finds the job's final state there.
        with self._cond:
            job.settled = True
            self._cond.notify_all()
        self._change()

    def _relay(self, job: Job) -> Callable[[Any, Any], None]:
        """on_item(item, result) for a job: its run grows by the item (core.runner.deltas), then the listeners hear it.
        An epoch still training (EpochInProgress) is only kept for the page, never told to the listeners."""
        event = getattr(job.config, "progress_unit", "epoch")  # "point" for a sweep

        def on_item(item: Any, result: Any) -> None:
            with self._cond:
                if isinstance(item, EpochInProgress):
                    job.in_progress = item
                    return
                job.result, job.in_progress = grown(result, job.items, item), None
                self._cond.notify_all()
            self._emit(event, job, item)

        return on_item

    def _run_on_node(self, job: Job) -> Ending:
        """Run one job on its Ray node (core.runner.remote), relaying its items; how it ended."""
        from core.runner import remote

        return remote.run(self._kinds[type(job.config)].run, job.config, job.run_id, job.stop.is_set, self._relay(job))

    def _run_in_workers(self, group: list[Job]) -> None:
        """A job, or a group's jobs taking turns (core.runner.turns), each in a worker of its own: the waiting ones,
        then fresh ones, all ready before any starts (a worker importing TensorFlow would slow a run being timed)."""
        workers = [self._pool.replace(w) for w in self._pool.take(len(group))]
        turns = [
            Turn(w, self._kinds[type(j.config)].run, j.config, j.run_id, j.stop, self._relay(j), len(group) > 1)
            for j, w in zip(group, workers, strict=True)
        ]

        def on_end(turn: Turn) -> None:
            job = group[turns.index(turn)]
            clean = isinstance(turn.ending, Done) and turn.ending.state in (State.COMPLETED, State.CANCELLED)
            # It exits (its memory goes back now, not when the last of the group ends), or waits for the next job.
            self._pool.give_back(turn.worker, clean and not self._closed)
            self._finish(job, *ending(job, turn.ending, turn.worker))

        try:
            with timed():
                alternate([t for t in turns if t.worker.ready], on_end)
        finally:
            for turn in turns:
                if turn.ending is None:  # never started (it died starting up), or alternate() raised
                    turn.ending = Died()
                    on_end(turn)
