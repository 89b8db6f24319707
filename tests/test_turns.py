"""A comparison's runs take turns epoch by epoch, each in its own worker (core.runner.turns): the real runner and
engine."""

import os
import signal
import time
from dataclasses import replace

import pytest

from core.engine import memory
from core.history.store import Store, attach
from core.settings.config import TrainConfig
from tests.conftest import wait_until
from ui import live

FIT = TrainConfig(dataset="synthetic", train_subset=2000, batch_size=20, model="mlp", epochs=3, execution="keras-fit")
LOOP = replace(FIT, execution="multi-step-loop")
# Batch 1 on an MLP: tenths of a second per epoch of 1,000 samples, slow enough to stop or kill mid-run.
SLOW = TrainConfig(dataset="synthetic", train_subset=1000, batch_size=1, model="mlp", epochs=40)


@pytest.fixture
def recorded(tmp_path, shared_runner):
    """The shared runner, its runs going to a store, and the (event, run id, item) its listeners saw, in order."""
    runner, store, events = shared_runner, Store(tmp_path / "runs.sqlite3"), []
    attach(runner, store)
    runner.add_listener(lambda event, job, item: events.append((event, job.run_id, getattr(item, "epoch", None))))
    yield runner, store, events
    store.close()


def test_a_groups_runs_take_turns_epoch_by_epoch_and_the_next_job_waits_for_both(recorded):
    runner, store, events = recorded
    ids = runner.submit_group([FIT, LOOP], ["g-1", "g-2"])
    after = runner.submit(replace(FIT, epochs=1))
    wait_until(lambda: runner.status("g-1").state == "running")
    # Both are running (taking turns), the next job waits, and the queue line says so.
    assert [(s.run_id, s.state) for s in runner.jobs()] == [("g-1", "running"), ("g-2", "running"), (after, "queued")]
    line = live.queue_line(runner.jobs(), set(ids))
    assert line.startswith("Queue — now, 2 runs taking turns: training mlp on CPU (this page)  ·  waiting: 1. training")

    finals = [runner.wait(i, timeout=300) for i in [*ids, after]]
    assert [s.state for s in finals] == ["completed"] * 3
    epochs = [(run_id, epoch) for event, run_id, epoch in events if event == "epoch"]
    # Plain fit's epochs take several times the loop's: had they run at once, the loop's would all come first.
    assert epochs == [("g-1", 1), ("g-2", 1), ("g-1", 2), ("g-2", 2), ("g-1", 3), ("g-2", 3), (after, 1)]
    runs = store.load(ids)
    assert [r.status for r in runs] == ["completed"] * 2 and [len(r.epochs) for r in runs] == [3, 3]
    # Same batches in each mode, so the same accuracy within float noise, taking turns or not.
    assert abs(runs[0].epochs[-1].test_accuracy - runs[1].epochs[-1].test_accuracy) <= 0.005


def test_stop_ends_both_runs_taking_turns_and_keeps_their_epochs(recorded):
    runner, store, _ = recorded
    ids = runner.submit_group([SLOW, SLOW], ["s-1", "s-2"])
    wait_until(lambda: runner.status("s-2").done >= 1, timeout=180)
    done = [runner.status(run_id).done for run_id in ids]
    began = time.monotonic()
    for run_id in ids:
        assert runner.cancel(run_id, by="the presenter")
    finals = [runner.wait(run_id, timeout=10) for run_id in ids]  # a generous ceiling; the time is printed
    print(f"stopping both took {time.monotonic() - began:.2f} s")
    assert [s.state for s in finals] == ["cancelled"] * 2, [s.state for s in finals]
    assert all(s.done <= d + 1 for s, d in zip(finals, done, strict=True))  # each stopped in its epoch or turn
    for run in store.load(ids):
        assert run.status == "cancelled" and 1 <= len(run.epochs) < SLOW.epochs


def test_a_worker_killed_while_taking_turns_leaves_its_run_interrupted_and_the_other_finishes(recorded):
    runner, store, _ = recorded
    assert runner.warm(180)
    pid = runner._pool.first().pid  # the waiting worker takes the group's first run
    killed, other = runner.submit_group([SLOW, replace(FIT, epochs=4)], ["k-1", "k-2"])
    wait_until(lambda: runner.status(other).done >= 1, timeout=180)
    os.kill(pid, signal.SIGKILL)

    final = runner.wait(killed, timeout=30)
    assert final.state == "interrupted" and final.error.startswith(f"The worker process (pid {pid}) was killed")
    assert store.get(killed).status == "interrupted" and len(store.get(killed).epochs) == final.done >= 1
    assert runner.wait(other, timeout=180).state == "completed" and len(store.get(other).epochs) == 4


def test_runs_that_would_not_fit_in_memory_at_once_do_not_take_turns():
    free = memory.available_ram()
    assert free is not None  # Linux: /proc/meminfo
    one = TrainConfig(dataset="fashion_mnist", model="cnn", epochs=1, batch_size=1000)

    def need(batch: int) -> int:
        return memory.estimate(replace(one, batch_size=batch)).total

    # A batch whose run needs about 60% of the free memory: one fits, two at once do not.
    per_sample = (need(2000) - need(1000)) / 1000
    big = replace(one, batch_size=int(2000 + (0.6 * free - need(2000)) / per_sample))
    assert 0.55 * free < memory.estimate(big).total < 0.65 * free
    assert memory.fits_together([big]) and not memory.fits_together([big, big])
    assert memory.fits_together([FIT, LOOP])
