"""Warm workers (core.runner.pool): both runs of a comparison find a worker waiting, and no worker starts while a run is
timed.

Real worker processes with a job kind that imports nothing (no TensorFlow), so each starts in a fraction of a second.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import pytest

from core.engine import memory
from core.runner import Runner, pool
from core.runner.kind import Kind
from tests.conftest import wait_until


@dataclass(frozen=True)
class PidsConfig:
    """A job that reports its worker and the workers beside it; seconds: how long it keeps its turn."""

    seconds: float = 0.0


def workers_of(parent: int) -> set[int]:
    """The pids of every core.runner.serve process whose parent is `parent`."""
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                is_worker = b"core.runner.serve" in cmdline.read()
        except (OSError, ValueError, IndexError):
            continue  # ended while we looked
        if ppid == parent and is_worker:
            found.add(int(entry))
    return found


def pids(config: PidsConfig, on_item, should_stop, run_id: str, take_turn=None) -> tuple[int, list[int]]:
    """(this worker's pid, every worker its server has now), after holding its turn for config.seconds."""
    if take_turn is not None:
        take_turn()
    deadline = time.monotonic() + config.seconds
    while time.monotonic() < deadline and not should_stop():
        time.sleep(0.01)
    return os.getpid(), sorted(workers_of(os.getppid()))


PIDS = Kind(pids, fits_together=lambda configs, waiting=1: True)  # they take turns, as a comparison's runs do

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the process table (Linux)")


def test_a_comparisons_two_runs_start_in_the_two_waiting_workers_and_the_pool_fills_again_after():
    with Runner({PidsConfig: PIDS}, warm=2) as runner:
        assert runner.warm(60) and runner.ready()
        waiting = {w.pid for w in runner._pool._waiting}
        assert len(waiting) == 2
        before = workers_of(os.getpid())  # this runner's, and other tests' runners' in this process
        ids = runner.submit_group([PidsConfig(), PidsConfig()], ["g-1", "g-2"])
        assert not runner.ready()  # queued or running: a Run now would wait
        results = [runner.wait(i, 60).result for i in ids]
        # Both ran in the workers that were waiting, and no worker (of any runner here) had started beside them.
        assert {pid for pid, _ in results} == waiting
        assert all(set(beside) <= before for _, beside in results)
        # Once the group ended, two fresh workers wait again, and the page may offer Run.
        assert runner.warm(60)
        wait_until(runner.ready, 30, "the pool filling again")
        again = {w.pid for w in runner._pool._waiting}
        assert len(again) == 2 and not again & waiting


def test_no_worker_starts_up_while_another_runners_run_is_timed():
    with Runner({PidsConfig: PIDS}) as timing:
        assert timing.warm(60)
        run_id = timing.submit(PidsConfig(seconds=1.5))
        wait_until(lambda: timing.status(run_id).state == "running", 30, "the timed run's start", every=0.01)
        wait_until(lambda: pool._timed, 30, "the run's timing", every=0.01)  # the job is in its worker, being timed
        made: list[Runner] = []
        maker = threading.Thread(target=lambda: made.append(Runner({PidsConfig: PIDS})))
        maker.start()
        maker.join(0.5)
        assert maker.is_alive(), "a new runner's worker started while another runner's run was timed"
        finished = timing.wait(run_id, 30)
        maker.join(30)
        assert finished.state == "completed" and made
        with made[0]:
            assert made[0].warm(60)


def test_the_warm_workers_memory_budget(monkeypatch):
    monkeypatch.delenv(memory.WARM_ENV, raising=False)
    monkeypatch.setattr(memory, "available_ram", lambda: 2 * memory.WORKER_BYTES + memory.RESERVE_BYTES)
    assert memory.warm_workers() == 2  # one per run of a comparison: 3.2 GB, a run's room left beside them
    monkeypatch.setattr(memory, "available_ram", lambda: 2 * memory.WORKER_BYTES + memory.RESERVE_BYTES - 1)
    assert memory.warm_workers() == 1
    monkeypatch.setenv(memory.WARM_ENV, "3")
    assert memory.warm_workers() == 3


@dataclass(frozen=True)
class HoldsConfig:
    """A job that holds its worker for `seconds` or until told to stop."""

    seconds: float = 0.0


def holds(config: HoldsConfig, on_item, should_stop, run_id: str) -> tuple[int, bool]:
    """(this worker's pid, whether it was told to stop)."""
    deadline = time.monotonic() + config.seconds
    while time.monotonic() < deadline and not should_stop():
        time.sleep(0.01)
    return os.getpid(), should_stop()


def fails(config: PidsConfig, on_item, should_stop, run_id: str):
    raise RuntimeError(f"the job of {os.getpid()} failed")


def test_with_worker_jobs_a_worker_runs_the_next_job_unless_its_last_one_failed_and_a_stale_stop_stops_nothing():
    with Runner({HoldsConfig: holds, PidsConfig: fails}, worker_jobs=5) as runner:
        first, second = (runner.wait(runner.submit(HoldsConfig()), 60).result[0] for _ in range(2))
        assert first == second  # one worker, one TensorFlow import, two jobs
        long = runner.submit(HoldsConfig(seconds=60))
        wait_until(lambda: runner.status(long).state == "running", 30, "the long job's start", every=0.01)
        assert runner.cancel(long)
        assert runner.wait(long, 30).result == (first, True)  # stopped at a check: a clean end, the worker kept
        # The next job in that worker is not stopped by the Stop meant for the one before.
        assert runner.wait(runner.submit(HoldsConfig(seconds=0.5)), 60).result == (first, False)
        failed = runner.wait(runner.submit(PidsConfig()), 60)
        assert failed.state == "failed" and str(first) in failed.error
        # A worker whose job failed exits: the next job has a fresh one.
        fresh = runner.wait(runner.submit(HoldsConfig()), 60).result[0]
        assert fresh != first and first not in workers_of(os.getpid())


def test_by_default_each_job_has_a_fresh_worker():
    with Runner({HoldsConfig: holds}) as runner:
        first, second = (runner.wait(runner.submit(HoldsConfig()), 60).result[0] for _ in range(2))
        assert first != second
