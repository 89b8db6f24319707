"""The runner and the store together, with the real engine on tiny synthetic data: queue, cancel, crash."""

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime

import pytest

from core.engine.kinds import JOB_KINDS
from core.history.store import Store, attach
from core.runner import Runner
from core.settings.config import TrainConfig
from tests.conftest import ROOT, cli_process, wait_until
from tests.store_helpers import integrity_check, records
from ui import live

QUICK = TrainConfig(dataset="synthetic", train_subset=1000, batch_size=50, epochs=2)
# Batch 1 makes an epoch of 1,000-2,000 samples last a few tenths of a second on a laptop core.
SLOW = TrainConfig(dataset="synthetic", train_subset=1000, batch_size=1, model="mlp", epochs=2)


@pytest.fixture
def runners(shared_runner):
    """runners(kinds): the shared runner for the engine's jobs, else a Runner of its own, closed after the test (so no
    idle worker outlives it)."""
    made = []

    def make(kinds=JOB_KINDS):
        if kinds is JOB_KINDS:
            return shared_runner
        made.append(Runner(kinds))
        return made[-1]

    yield make
    for runner in made:
        runner.close()


@pytest.fixture
def recorded(tmp_path, runners):
    """recorded(kinds) -> a fresh runner whose runs go to a store in tmp_path, and that store."""

    def make(kinds=JOB_KINDS):
        runner, store = runners(kinds), Store(tmp_path / "runs.sqlite3")
        attach(runner, store)
        return runner, store

    return make


def test_queued_runs_never_overlap_and_all_complete(tmp_path, recorded):
    runner, store = recorded()
    first, second = runner.submit(SLOW), runner.submit(QUICK)
    wait_until(lambda: runner.status(first).state == "running")
    third = runner.submit(QUICK)
    assert runner.status(second).position == 1
    assert runner.status(third).position == 2 and runner.status(third).describe() == "queued (position 2)"
    assert [s.run_id for s in runner.jobs()] == [first, second, third]

    finals = [runner.wait(run_id, timeout=300) for run_id in (first, second, third)]
    assert [s.state for s in finals] == ["completed"] * 3
    runs = store.load([first, second, third])
    assert [r.status for r in runs] == ["completed"] * 3 and [len(r.epochs) for r in runs] == [2, 2, 2]
    intervals = [(datetime.fromisoformat(r.started_at), datetime.fromisoformat(r.finished_at)) for r in runs]
    for (_, end), (start, _) in zip(intervals, intervals[1:], strict=False):
        assert end <= start  # one after another, in the order submitted
    for status, run in zip(finals, runs, strict=True):
        assert run.to_dict() == status.result.to_dict()  # what was stored is what the engine returned

    # A file exported here imports elsewhere and exports again byte for byte.
    with Store(tmp_path / "laptop.sqlite3") as laptop:
        text = store.export_json(first)
        assert laptop.import_file(text.encode()).added and laptop.export_json(first) == text


def test_cancel_during_an_epoch_stops_it_there_and_keeps_finished_epochs(recorded):
    runner, store = recorded()
    long_run = TrainConfig(dataset="synthetic", train_subset=2000, batch_size=1, model="mlp", epochs=50)
    running, queued = runner.submit(long_run), runner.submit(QUICK)
    assert runner.cancel(queued) and runner.status(queued).state == "cancelled"  # dropped from the queue at once
    done = wait_until(lambda: runner.status(running).done, what="epoch 1")  # epoch 2 starts as epoch 1 is sent
    began = time.monotonic()
    assert runner.cancel(running, by="the presenter")
    final = runner.wait(running, timeout=5)  # a generous ceiling: the stop itself is printed, not asserted
    print(f"cancel took {time.monotonic() - began:.2f} s")
    assert final.state == "cancelled", final.state
    assert final.done <= done + 1  # it stopped in the epoch it was in (2,000 steps), not at the run's end
    assert final.stopped_by == "the presenter" and runner.status(queued).stopped_by is None
    stored = store.get(running)
    assert stored.status == "cancelled" and 1 <= len(stored.epochs) < 50
    # The stored run keeps what the model learned on its last epoch only (a file stays small); the live items
    # had each epoch's as it came.
    kept = [replace(e, learned=None) for e in final.items[:-1]] + list(final.items[-1:])
    assert stored.epochs == kept and [m.epoch for m in stored.epochs] == list(range(1, len(final.items) + 1))
    assert store.get(queued) is None  # never started, so nothing to keep
    assert not runner.cancel(running)  # already over
    assert final.began and not runner.status(queued).began


def test_a_run_stopped_during_epoch_1_says_so(recorded):
    runner, _ = recorded()
    # 20,000 steps of batch 1: epoch 1 lasts seconds, and its first call is told at once (core.engine.training).
    run_id = runner.submit(TrainConfig(dataset="synthetic", train_subset=20000, batch_size=1, model="mlp", epochs=3))
    wait_until(lambda: runner.status(run_id).in_progress is not None, what="epoch 1's first call")
    assert runner.cancel(run_id)
    final = runner.wait(run_id, timeout=60)
    assert final.state == "cancelled" and final.began and final.done == 0
    assert live.status_line([final], ["CPU"], None) == "CPU: stopped during epoch 1"


def test_a_cli_training_killed_mid_run_is_interrupted_with_its_epochs(tmp_path):
    db = tmp_path / "runs.sqlite3"
    proc = cli_process(
        "train",
        "--db",
        str(db),
        "--dataset",
        "synthetic",
        "--train-subset",
        "2000",
        "--batch-size",
        "1",
        "--model",
        "mlp",
        "--epochs",
        "100",
    )
    guard = threading.Timer(180, proc.kill)  # never hang the suite
    guard.start()
    try:
        lines = []
        while not any(line.startswith("epoch") for line in lines):
            line = proc.stdout.readline()
            assert line, f"the training ended early: {proc.stderr.read()}"
            lines.append(line)
        os.kill(proc.pid, signal.SIGKILL)  # mid epoch 2: no handler runs, nothing is flushed or closed
        proc.wait()
        lines += proc.stdout.readlines()
    finally:
        guard.cancel()
    assert proc.returncode == -signal.SIGKILL
    run_id = next(line.split()[1].rstrip(",") for line in lines if line.startswith("run "))
    printed = [line for line in lines if line.startswith("epoch")]

    with Store(db) as store:
        assert integrity_check(store) == "ok"
        run = store.get(run_id)
        assert run.status == "interrupted" and f"pid {proc.pid}" in run.error
        numbers = [m.epoch for m in run.epochs]
        # Every epoch printed was on disk first; at most the one in progress is lost.
        assert numbers == list(range(1, len(numbers) + 1)) and len(printed) <= len(numbers) < 100
        assert run.host.get("hostname") and run.device.get("variables_on") == "CPU:0"


@dataclass(frozen=True)
class EchoConfig:
    """A job kind of this test's own: stands in for a sweep, which stores one JSON document."""

    text: str


@dataclass
class EchoResult:
    text: str
    status: str = "completed"
    error: str | None = None
    kind: str = "echo"

    def to_dict(self) -> dict:
        return {"schema_version": 1, "kind": self.kind, "text": self.text, "status": self.status}


def echo(config: EchoConfig, on_item, should_stop, run_id: str) -> EchoResult:
    """EchoConfig's job: module-level, so the worker process can import it."""
    return EchoResult(config.text)


def test_other_kinds_of_job_are_stored_whole_when_they_finish(recorded):
    runner, store = recorded({**JOB_KINDS, EchoConfig: echo})
    run_id = runner.submit(EchoConfig("hello"))
    assert runner.wait(run_id, timeout=30).state == "completed"
    assert records(store, "echo") == [(run_id, EchoResult("hello").to_dict())]
    assert store.get(run_id) is None and store.history() == []  # not a training run


def test_a_listener_that_cannot_write_fails_the_run_with_its_sentence(runners):
    # The store raising on an epoch (disk full, file locked) must not be swallowed: the run stops at
    # once and ends `failed` with that sentence, instead of training on with nothing kept.
    config = TrainConfig(dataset="synthetic", train_subset=200, batch_size=50, epochs=40)
    runner = runners()

    def broken(event, job, payload):
        if event == "epoch" and payload.epoch == 2:
            raise RuntimeError("The run history /x cannot be written (database or disk is full).")

    runner.add_listener(broken)
    run_id = runner.submit(config)
    final = runner.wait(run_id, timeout=120)
    assert final.state == "failed" and final.error == "The run history /x cannot be written (database or disk is full)."
    assert final.result.status == "failed" and final.result.error == final.error
    assert 2 <= final.done < 40  # stopped at the next step, not after all 40 epochs


def test_a_full_history_neither_ends_a_run_nor_strands_its_row(recorded, monkeypatch):
    # As the CLI does (one Recorder for both): a history that refuses writes, here full (a real SQLite file that
    # cannot grow: SQLite's own "database or disk is full"), is said on the job, the run trains on, and once the file
    # has room again its final state and every epoch are stored. Before, the run ended `failed` at the next step and
    # its row said `running` until the server restarted (a held lock: tests/test_history_safety.py).
    from core.history import recorder

    monkeypatch.setattr(recorder, "RETRY_S", 0.3)
    runner, store = recorded()
    pages = store._writer.execute("PRAGMA page_count").fetchone()[0]
    store._writer.execute(f"PRAGMA max_page_count = {pages + 12}")  # room for a few epochs, not 60
    run_id = runner.submit(TrainConfig(dataset="synthetic", train_subset=100, batch_size=50, epochs=60))
    final = runner.wait(run_id, timeout=180)
    assert final.state == "completed" and final.done == 60 and "full" in final.note
    stored = store.get(run_id)
    assert stored is not None and 1 <= len(stored.epochs) < 60 and stored.status == "running"
    assert [m.epoch for m in stored.epochs] == list(range(1, len(stored.epochs) + 1))
    store._writer.execute("PRAGMA max_page_count = 1073741823")  # the disk has room again
    wait_until(lambda: store.get(run_id).status == "completed", timeout=30)
    assert store.get(run_id).to_dict() == final.result.to_dict()
    assert [r.epochs_done for r in store.history()] == [60]


def test_a_row_whose_process_died_is_ended_when_the_history_lists_not_only_at_start(tmp_path):
    path = tmp_path / "runs.sqlite3"
    with Store(path) as page_store:  # open first, as the dashboard's is, before the other process dies
        code = (
            "import sys; from core.history.store import Store; from tests.sample_runs import make_result\n"
            f"s = Store({str(path)!r}); r = make_result(run_id='dies00000001', epochs=5)\n"
            "s.begin(r.run_id, r.config); s.add_epoch(r.run_id, r.epochs[0], r); print('begun', flush=True)\n"
            "import os; os._exit(0)  # gone without a final state, as a killed CLI is\n"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "begun", done.stderr
        [row] = page_store.history()
        assert (row.run_id, row.status, row.epochs_done) == ("dies00000001", "interrupted", 1)
        assert "ended before the run finished" in page_store.get("dies00000001").error


def test_a_pages_wait_for_a_change_ends_at_a_stop_not_at_an_epoch(runners):
    """ui.watcher's hold: a viewer's tick waits on Runner.wait_change, which a queued, started, stopped or settled job
    ends at once, and epochs landing do not."""
    runner = runners()
    before = runner.moment()
    run_id = runner.submit(replace(SLOW, epochs=30))  # seconds of epochs: the Stop comes during them
    assert runner.moment() != before  # queued
    wait_until(lambda: runner.status(run_id).state == "running" and runner.status(run_id).done >= 1)
    now = runner.moment()
    began = time.monotonic()
    assert runner.wait_change(now, 0.3) == now and time.monotonic() - began >= 0.3  # epochs land: no change
    threading.Timer(0.2, runner.cancel, args=(run_id,)).start()
    began = time.monotonic()
    assert runner.wait_change(now, 30) != now and time.monotonic() - began < 5  # the Stop, at once
    runner.wait(run_id, timeout=60)
    assert runner.status(run_id).state == "cancelled" and runner.moment() > now + 1  # asked to stop, then settled
