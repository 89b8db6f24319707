"""The run history: WAL and schema version, exact reads, history rows, dead writers, threads, CLI history."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
from dataclasses import replace

import pytest

from core.cli import main
from core.history.database import MIGRATIONS, process_token
from core.history.store import Store, StoreError, default_db_path
from core.results import steady_epoch_seconds
from core.settings.config import TrainConfig
from tests.conftest import ROOT
from tests.sample_runs import make_epochs, make_result
from tests.store_helpers import integrity_check, records, save_record

CONFIG = TrainConfig(dataset="synthetic", train_subset=1000, epochs=5, batch_size=50)


@pytest.fixture
def db(tmp_path):
    with Store(tmp_path / "runs.sqlite3") as store:
        yield store


def test_a_new_file_is_wal_with_the_current_schema_version(tmp_path):
    path = tmp_path / "deep" / "er" / "runs.sqlite3"
    Store(path).close()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 1
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"runs", "epochs", "traces"}


def test_default_path_is_env_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("TFDASH_DB", str(tmp_path / "mine.db"))
    assert default_db_path() == tmp_path / "mine.db"
    monkeypatch.delenv("TFDASH_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "tfdash" / "runs.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "tfdash" / "runs.sqlite3"
    assert not (tmp_path / "home").exists()  # naming the path creates nothing


def test_a_run_is_readable_epoch_by_epoch_and_exact_when_finished(db):
    final = make_result(run_id="r1", epochs=3)
    db.begin("r1", TrainConfig(**final.config))
    partial = replace(final, epochs=[], status="running", finished_at=None)
    for m in final.epochs[:2]:
        partial.epochs.append(m)
        db.add_epoch("r1", m, partial)
    midway = db.get("r1")
    assert midway.status == "running" and midway.epochs == final.epochs[:2]
    assert midway.host["hostname"] == "gpu-server" and midway.device["variables_on"] == "GPU:0"
    db.finish(final)
    assert db.get("r1").to_dict() == final.to_dict()
    assert db.export_json("r1") == final.to_json()


def test_history_rows_summarise_as_computed_by_hand(db):
    old = make_result(run_id="old", epochs=4, started_at="2026-11-29T10:00:00.000+00:00", seed=1)
    new = make_result(run_id="new", epochs=3, status="cancelled", started_at="2026-11-30T10:00:00.000+00:00")
    new.config["epochs"] = 10
    for result in (old, new):
        db.finish(result)
    rows = db.history()
    assert [r.run_id for r in rows] == ["new", "old"]  # newest first
    row = rows[1]
    seconds = [m.train_seconds for m in old.epochs]
    assert row.steady_epoch_seconds == sum(seconds[1:]) / 3  # the mean of epochs 2-4: epoch 1 (warm-up) left out
    assert row.final_test_accuracy == old.epochs[-1].test_accuracy
    assert (row.dataset, row.model, row.device, row.variables_on, row.batch_size) == (
        "synthetic",
        "softmax",
        "gpu",
        "GPU:0",
        50,
    )
    assert (row.epochs_done, row.epochs_total, row.status, row.host) == (4, 4, "completed", "gpu-server")
    assert row.execution == "multi-step-loop"  # the sample run's, as a row of the table and of the CSV
    assert (rows[0].epochs_done, rows[0].epochs_total, rows[0].status) == (3, 10, "cancelled")
    assert list(row.to_dict()) == [
        "run_id",
        "when",
        "dataset",
        "model",
        "device",
        "variables_on",
        "device_name",
        "execution",
        "epochs_done",
        "epochs_total",
        "batch_size",
        "final_test_accuracy",
        "steady_epoch_seconds",
        "status",
        "host",
        "origin",
    ]
    assert db.history(limit=1)[0].run_id == "new"


def test_load_keeps_the_order_asked_and_delete_removes_epochs_too(db):
    for i in range(3):
        db.finish(make_result(run_id=f"run{i}", seed=i, started_at=f"2026-11-30T08:0{i}:00.000+00:00"))
    assert [r.run_id for r in db.load(["run2", "nope", "run0"])] == ["run2", "run0"]
    assert db.delete("run2") is True and db.delete("run2") is False
    assert db.get("run2") is None
    assert db._query("SELECT COUNT(*) FROM epochs WHERE run_id = 'run2'")[0][0] == 0
    assert [r.run_id for r in db.history()] == ["run1", "run0"]


def test_other_kinds_of_result_live_beside_runs_without_a_migration(db):
    sweep = {"schema_version": 1, "batch_sizes": [32, 64, 128], "seconds": [1.5, 0.9, 0.7]}
    sweep_id = save_record(db, "sweep", sweep)
    db.finish(make_result(run_id="r1"))
    assert records(db, "sweep") == [(sweep_id, sweep)]
    assert [r.run_id for r in db.history()] == ["r1"] and db.get(sweep_id) is None
    with pytest.raises(ValueError):
        save_record(db, "sweep", sweep, run_id="r1")  # a training run's id is taken
    assert db._query("PRAGMA user_version")[0][0] == len(MIGRATIONS)


def _begin_in_child(path, run_id: str, epochs: int) -> int:
    """A separate process begins a run, writes `epochs` epochs and dies without finishing it."""
    code = (
        "import os, sys\n"
        "from core.history.store import Store\nfrom core.settings.config import TrainConfig\n"
        "from tests.sample_runs import make_epochs\n"
        f"s = Store({str(path)!r})\n"
        f"s.begin({run_id!r}, TrainConfig(dataset='synthetic', train_subset=1000, epochs=5, batch_size=50))\n"
        f"for m in make_epochs({epochs}):\n    s.add_epoch({run_id!r}, m)\n"
        "print(os.getpid(), flush=True)\nos._exit(0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def test_a_run_whose_process_died_becomes_interrupted_with_its_epochs(tmp_path):
    path = tmp_path / "runs.sqlite3"
    pid = _begin_in_child(path, "dead1", epochs=2)
    with Store(path) as db:
        run = db.get("dead1")
        assert run.status == "interrupted" and [m.epoch for m in run.epochs] == [1, 2]
        assert (
            run.error == f"The process that ran it (pid {pid} on {socket.gethostname()}) ended before the run finished."
        )
        assert integrity_check(db) == "ok"


def test_a_run_whose_process_lives_stays_running(tmp_path):
    path = tmp_path / "runs.sqlite3"
    with Store(path) as mine:
        mine.begin("live1", CONFIG)
        with Store(path) as other:  # e.g. the CLI opening the file while the dashboard trains
            assert other.get("live1").status == "running"
        # A live process that is not the writer (a recycled pid) does not keep a run alive.
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            with mine._tx() as con:
                for run_id, token in (("same", process_token(sleeper.pid)), ("recycled", "1")):
                    con.execute(
                        "INSERT INTO runs (run_id, status, schema_version, stored_at, owner_host, owner_pid,"
                        " owner_token) VALUES (?, 'running', 1, 'now', ?, ?, ?)",
                        (run_id, socket.gethostname(), sleeper.pid, token),
                    )
            with Store(path) as other:
                assert other.get("same").status == "running" and other.get("recycled").status == "interrupted"
        finally:
            sleeper.kill()
            sleeper.wait()


def test_many_threads_write_and_read_at_once(db):
    errors = []

    def writer(t: int) -> None:
        try:
            for i in range(5):
                run_id = f"t{t}r{i}"
                db.begin(run_id, CONFIG)
                for m in make_epochs(3, seed=i):
                    db.add_epoch(run_id, m)
                db.finish(make_result(run_id=run_id, seed=i))
        except Exception as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    def reader() -> None:
        try:
            for _ in range(30):
                db.history()
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(6)] + [
        threading.Thread(target=reader) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(db.history()) == 30 and all(len(r.epochs) == 3 for r in db.load(r.run_id for r in db.history()))
    assert integrity_check(db) == "ok"


def test_files_it_cannot_use_are_refused_in_one_sentence(tmp_path):
    newer = tmp_path / "newer.sqlite3"
    con = sqlite3.connect(newer)
    con.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    con.close()
    garbage = tmp_path / "notes.txt"
    garbage.write_text("not a database, just notes\n" * 100)
    for path, says in ((newer, "newer version"), (garbage, "cannot be opened")):
        with pytest.raises(StoreError) as info:
            Store(path)
        assert says in str(info.value) and "\n" not in str(info.value)
    assert garbage.read_text().startswith("not a database")


def test_cli_history_lists_runs_as_text_and_json(tmp_path, capsys):
    path = str(tmp_path / "runs.sqlite3")
    assert main(["history", "--db", path]) == 0
    assert capsys.readouterr().out == f"No runs recorded yet in {path}.\n" and not os.path.exists(path)
    with Store(path) as db:
        db.finish(make_result(run_id="r1"))
        db.finish(make_result(run_id="r2", epochs=1, status="failed", started_at="2026-12-01T08:00:00.000+00:00"))
    assert main(["history", "--db", path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["RUN", "WHEN", "(UTC)"] and len(lines) == 3
    assert lines[1].split()[:2] == ["r2", "2026-12-01"] and lines[1].split()[-2:] == ["failed", "gpu-server"]
    assert lines[2].split()[:2] == ["r1", "2026-11-30"] and "gpu (GPU:0)" in lines[2]
    assert main(["history", "--json", "--db", path]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in rows] == ["r2", "r1"]
    assert rows[1]["final_test_accuracy"] == make_result(run_id="r1").epochs[-1].test_accuracy


def test_reading_the_history_needs_neither_tensorflow_nor_streamlit(tmp_path):
    code = (
        "import sys\nfrom core.cli import main\n"
        f"assert main(['history', '--db', {str(tmp_path / 'x.db')!r}]) == 0\n"
        "import core.history.store, core.history.importer\n"
        "assert 'tensorflow' not in sys.modules and 'streamlit' not in sys.modules, 'heavy import'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_an_unusable_db_path_is_one_sentence_for_every_command(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where a folder should be")
    db = str(blocker / "runs.sqlite3")
    run_file = tmp_path / "run.json"
    run_file.write_text(make_result().to_json())
    tiny = ["--dataset", "synthetic", "--train-subset", "100", "--batch-size", "10", "--epochs", "1"]
    for argv in (["train", *tiny], ["import", str(run_file)]):
        assert main([*argv, "--db", db]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: The run history {db} cannot be opened"), err
    assert blocker.read_text() == "a file where a folder should be"


def test_an_epochs_write_costs_the_same_at_any_epoch_it_reads_no_earlier_epoch(tmp_path):
    # The summary used to be recomputed from every stored epoch at each new one: 60 ms at epoch 1,000 against 1 ms
    # at epoch 1 (bench/history_scale.py prints add_epoch_1000_vs_10). Now it is kept as epochs arrive in order.
    run = make_result(run_id="grow00000001", epochs=300)
    with Store(tmp_path / "runs.sqlite3") as store:
        store.begin(run.run_id, run.config)
        statements: list[str] = []
        store._writer.set_trace_callback(statements.append)
        for m in run.epochs:
            statements.clear()
            store.add_epoch(run.run_id, m, run)
        assert not [s for s in statements if "FROM epochs" in s], statements  # the 300th write read no epoch back
        [row] = store.history()
        assert (row.epochs_done, row.final_test_accuracy, row.steady_epoch_seconds) == (
            300,
            run.final_test_accuracy(),
            steady_epoch_seconds(run),
        )  # exactly what a loaded run says
        # Out of order (an epoch written again after a refused write): read back once, and right again.
        store.add_epoch(run.run_id, run.epochs[10], run)
        assert store.history()[0].epochs_done == 300
