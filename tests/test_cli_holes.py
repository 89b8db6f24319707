"""The command line's smaller holes (issue 19, item 6), each against the real CLI and the real SQLite file: a run id
with a trailing newline, a FIFO, escape sequences in a file name, a missing dataset or GPU, a --json that cannot be
written, a malformed --ray, and `delete`.
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from core.cli import main
from core.history.importer import RunFileError, parse_run_file
from core.history.store import Store
from tests.conftest import run_cli
from tests.sample_runs import make_result

TINY = ["--dataset", "synthetic", "--train-subset", "200", "--batch-size", "50", "--epochs", "1"]


def rows(db) -> list[tuple]:
    """Every runs row of the file, or [] when there is no file at all."""
    if not os.path.exists(db):
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT run_id, status FROM runs").fetchall()


def one_error(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_run_id_ending_in_a_newline_is_refused():
    data = json.loads(make_result(run_id="abc").to_json())
    data["run_id"] = "abc\n"  # `$` in the pattern matched before the newline: stored, and printed on two lines
    with pytest.raises(RunFileError, match=r"^run_id must be null or letters, digits"):
        parse_run_file(json.dumps(data).encode())


def test_importing_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    done = run_cli("import", str(fifo), "--db", str(tmp_path / "runs.sqlite3"), timeout=30)  # it hung before
    assert done.returncode == 1
    assert (
        done.stderr
        == f"error: {fifo}: The file is not a regular file (a directory, FIFO, device or socket); name a .json file.\n"
    )


def test_a_file_name_with_escape_sequences_never_reaches_the_terminal_raw(tmp_path, capsys):
    hostile = str(tmp_path / "\x1b]0;owned\x07\x1b[31mred\x9b2J.json")
    assert main(["import", hostile, "--db", str(tmp_path / "runs.sqlite3")]) == 1
    err = one_error(capsys)
    assert "red" in err and "No such file" in err
    assert not any(c in err for c in "\x1b\x07\x9b"), repr(err)


def test_a_missing_dataset_stores_no_failed_row(tmp_path):
    db = tmp_path / "runs.sqlite3"
    # An empty Keras cache and a proxy that refuses: MNIST cannot be downloaded, with or without the internet.
    offline = {
        "KERAS_HOME": str(tmp_path / "keras"),
        "https_proxy": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    done = run_cli("train", *TINY[2:], "--dataset", "mnist", "--db", str(db), env=offline)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: Dataset mnist is not on this machine")
    assert "Traceback" not in done.stderr and "recorded epoch by epoch" not in done.stdout  # before a run began
    assert rows(db) == []  # the README: nothing is stored


def test_a_sweep_on_a_gpu_that_is_not_here_stores_no_failed_row(tmp_path, capsys):
    from core.engine import devices

    if devices.gpu_count() > 3:
        pytest.skip("this machine has a gpu:3")
    db = tmp_path / "runs.sqlite3"
    assert main(["sweep", "--devices", "cpu,gpu:3", "--batch-sizes", "16", "--db", str(db)]) == 1
    err = one_error(capsys)
    assert err.startswith("error: No GPU is visible") or err.startswith("error: There is no gpu:3")
    assert rows(db) == []


@pytest.mark.parametrize("command", [["train", *TINY], ["sweep", "--batch-sizes", "16"]])
def test_a_json_path_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys, command, monkeypatch):
    from core.engine import sweep, training

    def no_work(*_args, **_kwargs):
        raise AssertionError("a training ran before the --json path was checked")

    monkeypatch.setattr(training, "train", no_work)
    monkeypatch.setattr(sweep, "run_sweep", no_work)
    db = tmp_path / "runs.sqlite3"
    assert main([*command, "--json", "/nonexistent/x", "--db", str(db)]) == 2
    assert one_error(capsys) == "error: --json: cannot write /nonexistent/x (no folder /nonexistent)."
    assert rows(db) == []


def test_a_malformed_ray_address_is_refused_not_ignored(tmp_path, capsys):
    db = tmp_path / "runs.sqlite3"
    assert main(["train", *TINY, "--ray", "bad address", "--db", str(db)]) == 2
    assert one_error(capsys).startswith("error: TFDASH_RAY_ADDRESS (or --ray) must be auto, HOST:PORT")
    assert rows(db) == []


def test_delete_removes_one_run_and_refuses_a_live_one(tmp_path, capsys):
    db = tmp_path / "runs.sqlite3"
    with Store(db) as store:
        store.finish(make_result(run_id="gone00000001"))
        store.finish(make_result(run_id="kept00000001"))
        store.begin("live00000001", make_result().config)  # this process is alive: its run is really running
        assert main(["delete", "gone00000001", "--db", str(db)]) == 0
        assert capsys.readouterr().out == "Deleted gone00000001 and its epochs; every other run is kept.\n"
        assert main(["delete", "live00000001", "--db", str(db)]) == 1
        assert "is still running" in one_error(capsys)
        assert main(["delete", "gone00000001", "--db", str(db)]) == 1
        assert "no run 'gone00000001'" in one_error(capsys)
        assert sorted(rows(db)) == [("kept00000001", "completed"), ("live00000001", "running")]
