"""The workers that wait with TensorFlow imported, so that a Run starts at once, and when a new one may start.

How many wait is the pool's size: one per run of a comparison where memory holds them (core.engine.memory.
warm_workers: two, ~1.6 GB each), else one. A job takes waiting workers (fresh ones start for a larger
group); once the job or group has ended, its workers exit (their memory goes back) and the pool fills up again.

The rule, for every pool of the process: no worker starts up while a run is timed. Importing TensorFlow keeps
both cores of a small machine busy for seconds; a spare worker whose start-up overlapped other runners'
timed runs in CI was reverted for it (76b05bc). So a job waits until every start-up in the process has
finished (timed()), and a worker starts only while no job of the process is timed (start()).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from core.runner.worker import Worker

WORKER_JOBS_ENV = "TFDASH_WORKER_JOBS"  # how many jobs a worker runs before it exits; 1 by default
STARTUP_TIMEOUT = 180.0  # a start-up that takes longer (a dead disk) no longer holds jobs back

_cond = threading.Condition()
_starting: set[Worker] = set()  # started, not yet ready nor dead
_timed = 0  # jobs of this process running now


def worker_jobs() -> int:
    """$TFDASH_WORKER_JOBS (a whole number from 1), else 1: each worker exits after its job and its memory goes back."""
    asked = os.environ.get(WORKER_JOBS_ENV, "").strip()
    return int(asked) if asked.isdigit() and int(asked) >= 1 else 1


def start(warm_ups: Iterable[Callable[[], None]], jobs: int = 1, preload: tuple[str, ...] = ()) -> Worker:
    """A new worker (forked after importing `preload` where it can be, warming up with warm_ups, running up to `jobs`
    jobs), started once no job of this process is being timed."""
    with _cond:
        while _timed:
            _cond.wait()
        worker = Worker(warm_ups, jobs, preload)
        _starting.add(worker)
        return worker


@contextmanager
def timed() -> Iterator[None]:
    """Around a job's run: first every worker start-up of the process ends, then none begins until the job ends."""
    global _timed
    while True:
        with _cond:
            pending = list(_starting)
            if not pending:
                _timed += 1
                break
        for worker in pending:
            worker.wait_ready(STARTUP_TIMEOUT)  # ready, dead or too slow: it no longer counts as starting
            with _cond:
                _starting.discard(worker)
    try:
        yield
    finally:
        with _cond:
            _timed -= 1
            _cond.notify_all()


class Pool:
    """The workers waiting for the next job of one Runner: `size` of them once filled."""

    def __init__(
        self, warm_ups: Iterable[Callable[[], None]], size: int = 1, worker_jobs: int = 1, preload: tuple[str, ...] = ()
    ) -> None:
        self._warm_ups = list(warm_ups)
        self._preload = preload
        self.size = max(1, size)
        self.worker_jobs = max(1, worker_jobs)  # 1: each worker exits after its job (its memory goes back)
        self._lock = threading.Condition()
        self._waiting: list[Worker] = []
        self.fill()  # warming up now, before anyone presses Run

    def fill(self) -> None:
        """Start workers until `size` wait (each once no job of the process is timed)."""
        while True:
            with self._lock:
                if len(self._waiting) >= self.size:
                    return
            worker = start(self._warm_ups, self.worker_jobs, self._preload)
            with self._lock:
                self._waiting.append(worker)
                self._lock.notify_all()

    def take(self, count: int) -> list[Worker]:
        """`count` workers for a job or a group: the waiting ones first, then fresh ones (starting now)."""
        with self._lock:
            taken, self._waiting = self._waiting[:count], self._waiting[count:]
        return taken + [start(self._warm_ups, self.worker_jobs, self._preload) for _ in range(count - len(taken))]

    def replace(self, worker: Worker) -> Worker:
        """`worker` once it is ready, or a fresh one if it died starting up (e.g. killed): one try."""
        if worker.wait_ready():
            return worker
        worker.close()
        fresh = start(self._warm_ups, self.worker_jobs, self._preload)
        fresh.wait_ready()
        return fresh

    def give_back(self, worker: Worker, clean: bool) -> None:
        """A worker whose job has ended: it waits for the next job if it may run another, its job ended cleanly
        (completed or stopped at a check) and the pool has room; else it exits now, and its memory goes back."""
        with self._lock:
            if clean and worker.jobs_left > 0 and len(self._waiting) < self.size:
                self._waiting.append(worker)
                self._lock.notify_all()
                return
        worker.close()

    def first(self) -> Worker | None:
        """The worker the next job will take, if one waits."""
        with self._lock:
            return self._waiting[0] if self._waiting else None

    def ready(self) -> bool:
        """Whether the pool is full and every worker in it has TensorFlow imported, without waiting."""
        with self._lock:
            waiting = list(self._waiting)
        return len(waiting) >= self.size and all(w.poll_ready() for w in waiting)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the pool is full and ready (True), or timeout or a worker in it died (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        with self._lock:
            if not self._lock.wait_for(lambda: len(self._waiting) >= self.size, timeout):
                return False
            waiting = list(self._waiting)
        return all([w.wait_ready(left()) for w in waiting])

    def close(self) -> None:
        """End every waiting worker now."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for worker in waiting:
            worker.kill()
            worker.close()
