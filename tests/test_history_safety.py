"""Issue 10's history problems, each against the real SQLite file and the real CLI: a held lock, a full disk,
a run id that is a sweep's, duplicate keys, hostile labels, paths that are not a history, a missing GPU,
a damaged file (salvage, export --all) and a read-only one.
"""

import json
import os
import resource
import sqlite3
import stat
import subprocess
import sys
import threading
import time

import pytest

from core.cli import main
from core.history.importer import RunFileError, parse_run_file
from core.history.store import Store, StoreError
from tests.conftest import ROOT, cli_process, run_cli, wait_until
from tests.sample_runs import make_result
from tests.store_helpers import checkpoint, integrity_check
from tests.test_sweep_store import make_sweep

TINY = ["--dataset", "synthetic", "--train-subset", "200", "--batch-size", "50"]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def raw_rows(path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT * FROM runs ORDER BY run_id").fetchall()


# -- 5: one id space --------------------------------------------------------------------------------
def test_a_run_whose_id_is_a_sweeps_is_refused_and_the_sweep_is_untouched(tmp_path):
    path = tmp_path / "runs.sqlite3"
    with Store(path) as store:
        store.finish(make_sweep(run_id="clash0000001"))
        before = raw_rows(path)
        run = make_result(run_id="clash0000001", epochs=3)
        with pytest.raises(RunFileError, match="already in the history"):
            store.import_file(run.to_json().encode())
        for write in (store.finish,):
            with pytest.raises(StoreError, match="clash0000001 is already used by a sweep"):
                write(run)
        with pytest.raises(StoreError, match="belongs to a sweep"):
            store.add_epoch("clash0000001", run.epochs[0], run)
        with pytest.raises(StoreError, match="belongs to a sweep"):
            store.mark("clash0000001", "failed", "x")
        assert [r.run_id for r in store.sweeps()] == ["clash0000001"] and store.history() == []
    assert raw_rows(path) == before
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM epochs").fetchone() == (0,)


# -- 6: duplicate keys and hostile labels ---------------------------------------------------------------
@pytest.mark.parametrize("where", ["top", "epoch"])
def test_a_key_given_twice_is_refused_naming_it(where):
    text = make_result().to_json()
    if where == "top":
        text = text.replace('"status": "completed"', '"status": "failed", "status": "completed"')
        key = "status"
    else:
        text = text.replace('"epoch": 2,', '"epoch": 2, "test_accuracy": 0.5,', 1)
        key = "test_accuracy"
    with pytest.raises(RunFileError) as info:
        parse_run_file(text.encode())
    assert f'key "{key}" twice' in one_line(str(info.value))


HOSTILE = "\x1b[2J\x1b]0;owned\x07evil\nhost\u202e" + "h" * 9_960


def test_hostile_labels_are_cleaned_on_import_and_when_printed(tmp_path, capsys):
    db = str(tmp_path / "runs.sqlite3")
    imported = make_result(run_id="imported0001")
    imported.host["hostname"] = HOSTILE
    imported.device["name"] = "GPU\x1b[31m red\x1b[0m"
    run_file = tmp_path / "run.json"
    run_file.write_text(imported.to_json())
    assert main(["import", str(run_file), "--db", db]) == 0
    said = capsys.readouterr().out
    assert "\x1b" not in said and len(one_line(said)) < 400
    with Store(db) as store:
        stored = store.get("imported0001")
        assert stored.host["hostname"].startswith("evil host ") and len(stored.host["hostname"]) <= 200
        assert stored.device["name"] == "GPU red"
        raw = make_result(run_id="rawrow000001", started_at="2026-12-01T08:00:00.000+00:00")
        raw.host["hostname"] = HOSTILE  # a row written before cleaning existed is cleaned when printed
        store.finish(raw)
    assert main(["history", "--db", db]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\u202e") and max(map(len, out.splitlines())) < 250


# -- 6: paths that are not a history ------------------------------------------------------------------------
def test_an_empty_db_name_is_refused_not_the_default(tmp_path, monkeypatch, capsys):
    assert main(["history", "--db", ""]) == 1
    assert '--db ""' in one_line(capsys.readouterr().err)
    monkeypatch.setenv("TFDASH_DB", "")
    for argv in (["history"], ["import", str(tmp_path / "none.json")]):
        assert main(argv) == 1
        assert 'TFDASH_DB=""' in one_line(capsys.readouterr().err)
    with pytest.raises(StoreError, match="empty"):
        Store()


def test_special_files_and_an_empty_file_are_refused(tmp_path, capsys):
    journal_before = os.path.exists("/dev/null-journal")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    cases = [
        ("/dev/null", "not a regular file"),
        (str(tmp_path), "is a directory"),
        (str(fifo), "not a regular file"),
        (str(empty), "empty (0-byte) file"),
    ]
    for path, says in cases:
        for argv in (["history"], ["export", "--all"], ["import", str(tmp_path / "x.json")]):
            assert main([*argv, "--db", path]) == 1
            err = one_line(capsys.readouterr().err)
            assert says in err and path in err, err
    assert os.path.exists("/dev/null-journal") == journal_before
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and empty.stat().st_size == 0


def test_a_gpu_that_is_not_here_is_refused_before_a_run_row(tmp_path):
    db = tmp_path / "runs.sqlite3"
    proc = run_cli("train", *TINY, "--epochs", "1", "--device", "gpu:99", "--db", str(db))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "gpu" in one_line(proc.stderr).lower()
    assert not db.exists() or raw_rows(db) == []


# -- 2: a held lock ----------------------------------------------------------------------------------------------
def hold_lock(path) -> sqlite3.Connection:
    """Another connection holding the write lock (as another process would)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_held_lock_fails_a_write_in_the_stated_time_and_never_blocks_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("TFDASH_LOCK_TIMEOUT", "3")
    path = tmp_path / "runs.sqlite3"
    store = Store(path)
    store.finish(make_result(run_id="done00000001"))
    run = make_result(run_id="live00000001")
    store.begin("live00000001", run.config)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sqlite3,time\nd=sqlite3.connect({str(path)!r},isolation_level=None)\n"
            "d.execute('BEGIN EXCLUSIVE')\nprint('held',flush=True)\ntime.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        failures = []
        writer = threading.Thread(target=lambda: failures.append(_try(store.add_epoch, "live00000001", run.epochs[0])))
        began = time.monotonic()
        writer.start()
        wait_until(lambda: held_elsewhere(store._write_lock), 10, "the writer's wait for the lock", every=0.01)
        rows = store.history()
        read_while_writing = writer.is_alive()  # the list came back while this process's writer still waited
        writer.join(20)
        write_took = time.monotonic() - began
    finally:
        holder.kill()
        holder.wait()
    assert sorted(r.run_id for r in rows) == ["done00000001", "live00000001"]
    assert read_while_writing, "the list waited behind this process's own writer"
    assert not writer.is_alive() and write_took > 2.5  # it waited the stated 3 s, then gave up
    [err] = failures
    assert str(path) in err and "locked by another process for 3 s" in err and "\n" not in err
    store.add_epoch("live00000001", run.epochs[0], run)  # the lock is gone: writes work again
    assert store.get("live00000001").epochs == run.epochs[:1]
    store.close()


def held_elsewhere(lock) -> bool:
    """Whether another thread holds `lock` (this one cannot take it now)."""
    if lock.acquire(blocking=False):
        lock.release()
        return False
    return True


def _try(fn, *args) -> str | None:
    try:
        fn(*args)
    except StoreError as err:
        return str(err)
    return None


def train_with_lock(tmp_path, release_after_epoch: int | None):
    """`train` in a real process while this process holds the history's write lock from its first line on."""
    db, out = tmp_path / "runs.sqlite3", tmp_path / "run.json"
    proc = cli_process(
        "train", *TINY, "--epochs", "3", "--db", str(db), "--json", str(out), env={"TFDASH_LOCK_TIMEOUT": "1"}
    )
    holder, stdout = None, []
    for line in proc.stdout:
        stdout.append(line)
        if line.startswith("run ") and holder is None:
            holder = hold_lock(db)
        if release_after_epoch and line.startswith(f"epoch {release_after_epoch:>3}/") and holder is not None:
            holder.execute("ROLLBACK")
    proc.wait(120)
    err = proc.stderr.read()
    if holder is not None and holder.in_transaction:
        holder.execute("ROLLBACK")
    return proc.returncode, "".join(stdout), err, db, out


def test_cli_training_goes_on_through_a_held_lock_and_stores_every_epoch_once_it_is_free(tmp_path):
    code, out, err, db, _ = train_with_lock(tmp_path, release_after_epoch=1)
    assert code == 0, err
    assert "locked by another process for 1 s" in err and "Training goes on" in err
    assert out.count("\nepoch ") == 3
    with Store(db) as store:
        [row] = store.history()
        assert row.status == "completed" and row.epochs_done == 3


def test_cli_says_which_epochs_are_stored_when_the_lock_is_never_released(tmp_path, capsys):
    code, out, err, db, json_file = train_with_lock(tmp_path, release_after_epoch=None)
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith(
        f"error: The run history {db} cannot be written: it stayed locked by another process for 1 s"
    )
    run_id = out.split("run ", 1)[1].split(",")[0]
    assert f"Epochs none of run {run_id} are stored in it; 1-3 could not be." in last
    advice = f"The whole result is in {json_file}: python -m core import {json_file} replaces the partial run."
    assert advice in last
    assert len(json.loads(json_file.read_text())["epochs"]) == 3
    # The advice can be followed: the complete file replaces the partial run of the same id, and says so.
    assert main(["import", str(json_file), "--db", str(db)]) == 0
    said = one_line(capsys.readouterr().out)
    assert said.startswith(f"Replaced the partial run {run_id} (interrupted, 0 of 3 epochs stored) with the file's")
    with Store(db) as store:
        [row] = store.history()
        assert (row.run_id, row.status, row.epochs_done, row.origin) == (run_id, "completed", 3, "local")
    assert main(["import", str(json_file), "--db", str(db)]) == 0  # again: already there, nothing changed
    assert "nothing changed" in capsys.readouterr().out


def test_a_recorder_trains_through_a_held_lock_and_writes_the_final_state_once_it_is_free(tmp_path, monkeypatch):
    # The page's runs and the CLI's share this recorder (core.history.recorder): a lock held past the timeout is
    # said, the epochs wait, and the final state is retried until the history takes it; no row is left `running`.
    from core.history import recorder as recording

    monkeypatch.setenv("TFDASH_LOCK_TIMEOUT", "0.5")
    path = tmp_path / "runs.sqlite3"
    run = make_result(run_id="held00000001", epochs=3)
    with Store(path) as store:
        rec = recording.Recorder(store, run.run_id, run.config)
        rec.begin()
        assert rec.epoch(run.epochs[0], run) is None
        holder = hold_lock(path)
        try:
            note = rec.epoch(run.epochs[1], run)
            assert "locked by another process for 0.5 s" in note and "Training goes on; epoch 2 will be written" in note
            rec.epoch(run.epochs[2], run)
            refused = rec.finish(run)
            assert refused is not None and "locked" in str(refused)
            assert rec.kept() == " Epochs 1 of run held00000001 are stored in it; 2-3 could not be."
            rec.keep_trying(every=0.2)
            assert store.get(run.run_id).status == "running" and len(store.get(run.run_id).epochs) == 1
        finally:
            holder.execute("ROLLBACK")
        wait_until(lambda: store.get(run.run_id).status != "running", 10, "the final state's write")
        assert store.get(run.run_id) == run


# -- 2: a full disk ----------------------------------------------------------------------------------------
def limited(max_bytes: int):
    """A child process that may write files of at most max_bytes: a disk that is full at that size."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))


def test_a_full_disk_is_one_sentence_through_the_store(tmp_path):
    path = tmp_path / "runs.sqlite3"
    Store(path).close()
    code = (
        "import sys\nfrom core.history.store import Store, StoreError\nfrom tests.sample_runs import make_result\n"
        f"s = Store({str(path)!r}); r = make_result(run_id='full00000001', epochs=200)\n"
        "s.begin(r.run_id, r.config)\nfor m in r.epochs:\n    try:\n        s.add_epoch(r.run_id, m, r)\n"
        "    except StoreError as err:\n        print(m.epoch, err); sys.exit(0)\nsys.exit(3)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, preexec_fn=limited(120_000)
    )
    assert proc.returncode == 0, proc.stderr
    epoch, sentence = one_line(proc.stdout).split(" ", 1)
    assert sentence.startswith(f"The run history {path} cannot be written (") and int(epoch) > 1
    with Store(path) as store:  # what was written before the disk filled is all there
        assert store.get("full00000001").epochs == make_result(epochs=200).epochs[: int(epoch) - 1]


def test_a_full_disk_through_the_cli_says_what_was_kept(tmp_path):
    db = tmp_path / "runs.sqlite3"
    Store(db).close()
    argv = [sys.executable, "-m", "core", "train", *TINY, "--epochs", "40", "--db", str(db)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=limited(90_000))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: The run history {db} cannot be written (") and "could not be." in last
    stored = last.split("Epochs ", 1)[1].split(" of run")[0]
    with Store(db) as store:
        [row] = store.history()
        assert row.epochs_done == (0 if stored == "none" else int(stored.split("-")[-1]))
        assert row.epochs_done < 40


# -- 6: a damaged file: salvage and export --all ------------------------------------------------------------
def damaged_history(tmp_path):
    """A real history of 30 runs and 2 sweeps, one of whose epoch pages is then overwritten with garbage."""
    path = tmp_path / "damaged.sqlite3"
    runs = [make_result(run_id=f"run{i:09d}", epochs=40, seed=i) for i in range(30)]
    with Store(path) as store:
        for run in runs:
            store.finish(run)
        store.finish(make_sweep(run_id="sweep0000001"))
        store.finish(make_sweep(run_id="sweep0000002", seed=1))
        checkpoint(store)
    data = bytearray(path.read_bytes())
    marker = json.dumps(runs[17].epochs[20].test_accuracy).encode()
    page = data.index(marker) // 4096
    assert page > 1
    data[page * 4096 : (page + 1) * 4096] = os.urandom(4096)
    path.write_bytes(bytes(data))
    return path, runs


def test_salvage_saves_every_readable_run_of_a_damaged_file(tmp_path, capsys):
    path, runs = damaged_history(tmp_path)
    new = tmp_path / "saved.sqlite3"
    assert main(["salvage", str(path), str(new)]) == 0
    said = one_line(capsys.readouterr().out)
    assert said.startswith("Salvaged ") and "integrity check: ok" not in said and str(new) in said
    with Store(new) as saved:
        assert integrity_check(saved) == "ok"
        kept = {r.run_id: r for r in saved.load(r.run_id for r in saved.history())}
        assert len(saved.sweeps()) == 2 and saved.get_sweep("sweep0000001") == make_sweep(run_id="sweep0000001")
    whole = [r for r in runs if r.run_id in kept and len(kept[r.run_id].epochs) == 40]
    assert len(whole) >= 25 and all(kept[r.run_id] == r for r in whole)
    assert said.startswith(
        f"Salvaged {len(kept) + 2} of the 32 results found in {path} ({len(kept)} runs, {len(kept) - len(whole)} of "
        "them missing some epochs, and 2 sweeps)"
    )
    assert main(["salvage", str(path), str(new)]) == 1  # never over an existing file
    assert "already exists" in one_line(capsys.readouterr().err)


def test_salvage_counts_rows_it_could_not_read_among_the_results_found(tmp_path, capsys):
    # 40 runs, one page of the runs table overwritten: the rows there are of no known kind, yet they were found.
    path, new = tmp_path / "damaged.sqlite3", tmp_path / "saved.sqlite3"
    with Store(path) as store:
        for i in range(40):
            store.finish(make_result(run_id=f"run{i:09d}", epochs=5, seed=i))
        checkpoint(store)
    data = bytearray(path.read_bytes())
    pages = sorted({i // 4096 for i in range(len(data)) if data.startswith(b'"cpu_model"', i)})  # runs rows only
    page = pages[len(pages) // 2]
    data[page * 4096 + 8 : (page + 1) * 4096] = os.urandom(4096 - 8)
    path.write_bytes(bytes(data))
    assert main(["salvage", str(path), str(new)]) == 0
    said = one_line(capsys.readouterr().out)
    with Store(new) as saved:
        kept = len(saved.history())
    assert 0 < kept < 40
    assert said.startswith(f"Salvaged {kept} of the 40 results found in {path} ({kept} runs,")
    assert f"; {40 - kept} could not be read (integrity check: " in said


def test_salvage_counts_an_id_whose_row_is_gone_as_not_read(tmp_path):
    # The id index of a damaged file may name a run whose table row is gone (a fresh clone's run met it once with the
    # random page above: a traceback, the row read back as None). Such an id is one result that could not be read.
    from core.history import salvage
    from core.history.database import connect

    path = tmp_path / "runs.sqlite3"
    with Store(path) as store:
        store.finish(make_result(run_id="run000000001", epochs=2))
    damaged, out = sqlite3.connect(path), connect(tmp_path / "saved.sqlite3")
    try:
        assert salvage._copy(damaged, out, ["run000000001", "run000000002"]) == (1, 0, 0, 1)
    finally:
        damaged.close()
        out.close()


def test_a_file_that_is_not_a_history_is_refused_by_salvage_and_history_and_nothing_is_made(tmp_path, capsys):
    text, other, new = tmp_path / "notes.sqlite3", tmp_path / "other.sqlite3", tmp_path / "new.sqlite3"
    text.write_text("not a database at all\n" * 100)
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    assert main(["salvage", str(text), str(new)]) == 1
    assert one_line(capsys.readouterr().err) == (
        f"error: {text} is not an SQLite file (file is not a database), so not a run history; nothing was written."
    )
    assert main(["salvage", str(other), str(new)]) == 1
    assert "without a runs table, so not a run history" in one_line(capsys.readouterr().err)
    assert not new.exists()
    # `history` on a damaged file names the way out, with the file's own name.
    assert main(["history", "--db", str(text)]) == 1
    err = one_line(capsys.readouterr().err)
    assert "not a database" in err and f"python -m core salvage {text} NEW copies every readable run" in err


def test_another_programs_exclusive_lock_is_said_as_a_lock_not_a_bad_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TFDASH_LOCK_TIMEOUT", "1")
    path = tmp_path / "runs.sqlite3"
    with Store(path) as store:
        store.finish(make_result(run_id="locked000001"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE runs SET status = status")
    try:
        assert main(["history", "--db", str(path)]) == 1
    finally:
        holder.close()
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"error: The run history {path} cannot be opened: another program has held it locked for 1 s")
    assert "set TFDASH_DB or --db" not in err and "try again" in err


def test_export_all_writes_every_readable_result_one_per_line(tmp_path, capsys):
    path = tmp_path / "runs.sqlite3"
    with Store(path) as store:
        for i in range(3):
            store.finish(make_result(run_id=f"run{i:09d}", seed=i))
        store.finish(make_sweep())
    out = tmp_path / "all.jsonl"
    assert main(["export", "--all", "--out", str(out), "--db", str(path)]) == 0
    assert one_line(capsys.readouterr().err) == "Exported 4 of 4 results (3 runs, 1 sweeps)."
    fresh = tmp_path / "fresh.sqlite3"
    with Store(fresh) as again:
        for line in out.read_text().splitlines():
            assert again.import_file(line.encode()).added
        assert [r.run_id for r in again.history()] == [r.run_id for r in Store(path).history()]


# -- 6: a read-only history ------------------------------------------------------------------------------------
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_history_lists_and_exports_and_says_so_on_a_write(tmp_path, what, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "runs.sqlite3"
    with Store(path) as store:
        store.finish(make_result(run_id="kept00000001"))
    listing = main(["history", "--db", str(path)]) == 0 and capsys.readouterr().out
    target = path if what == "file" else folder
    mode = target.stat().st_mode
    target.chmod(0o444 if what == "file" else 0o555)
    try:
        assert main(["history", "--db", str(path)]) == 0 and capsys.readouterr().out == listing
        assert main(["export", "kept00000001", "--db", str(path)]) == 0
        assert json.loads(capsys.readouterr().out)["run_id"] == "kept00000001"
        run_file = tmp_path / "other.json"
        run_file.write_text(make_result(run_id="other0000001").to_json())
        assert main(["import", str(run_file), "--db", str(path)]) == 1
        assert one_line(capsys.readouterr().err) == (
            f"error: The run history {path} is read-only; it can be listed and exported, not changed."
        )
    finally:
        target.chmod(mode)
