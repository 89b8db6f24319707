"""A history file and run files written by the version before the reshaping (commit 2767bf8) still
open, list and export exactly as that version printed them.

tests/data/history_v1/ was made with that commit's `python -m core`: a completed, a failed (no GPU),
a cancelled (SIGINT) and an interrupted (SIGKILL) training run, a completed and a failed sweep, and an
imported run and sweep (`imported_*.json`); next to it are that version's `history`, `history --json`,
`export ID` and `export --csv ID` outputs, byte for byte. Since then two things were added on purpose: an
`execution` column in the history's JSON rows and in each run's CSV (an old 'fast' reads 'multi-step-loop'),
and an `elapsed_train_seconds` column last in each run's CSV (training seconds summed from epoch 1); and the steady
epoch is core.analysis.compare's, the mean of epochs 2+, as the page says it: `median_epoch_seconds` is now
`steady_epoch_seconds` (these runs have at most one steady epoch, so its value is the same), `history` prints it as
STEADY S, and an EXECUTION column after DEVICE (the two arms of a comparison differ there).
"""

import csv
import io
import itertools
import json
import re
import shutil
from pathlib import Path

import pytest

from core.cli import main

OLD = Path(__file__).parent / "data" / "history_v1"
IDS = [row["run_id"] for row in json.loads((OLD / "history.json").read_text())]


@pytest.fixture
def old_db(tmp_path) -> str:
    """A copy of the old file: opening it may recover or migrate, and the fixture must stay as it was."""
    copy = tmp_path / "history.sqlite3"
    shutil.copyfile(OLD / "history.sqlite3", copy)
    return str(copy)


def cli(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def without_execution(text: str) -> str:
    """A CSV export as the old version wrote it: the same, less the columns added since (the last one checked)."""
    rows = list(csv.reader(io.StringIO(text)))
    if rows and rows[0][:2] == ["device", "execution"]:
        rows = [[row[0], *row[2:]] for row in rows]
    if rows and rows[0][-1] == "elapsed_train_seconds":
        column = rows[0].index("train_seconds")
        elapsed = [float(row[-1]) for row in rows[1:]]
        assert elapsed == pytest.approx(list(itertools.accumulate(float(r[column]) for r in rows[1:])), abs=1e-6)
        rows = [row[:-1] for row in rows]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def as_old_table(text: str) -> str:
    """`history`'s text as the old version printed it: its first table less the EXECUTION column, MEDIAN S named."""
    runs, _, sweeps = text.partition("\n\n")
    lines = runs.splitlines()
    start = lines[0].index("EXECUTION")
    end = start + len(re.match(r"EXECUTION +", lines[0][start:]).group())
    lines = [(line[:start] + line[end:]).rstrip() for line in lines]
    return "\n".join([lines[0].replace("STEADY S", "MEDIAN S"), *lines[1:]]) + "\n\n" + sweeps


def old_csv(run_id: str) -> str:
    return (OLD / f"{run_id}.csv").read_text()


EXECUTIONS = {"fast": "multi-step-loop", "keras-default": "keras-fit"}  # the old words, renamed


def test_the_fixture_holds_every_kind_of_row():
    rows = json.loads((OLD / "history.json").read_text())
    kinds = {(row["kind"], row["status"]) for row in rows}
    assert kinds == {
        ("train", "completed"),
        ("train", "failed"),
        ("train", "cancelled"),
        ("train", "interrupted"),
        ("sweep", "completed"),
        ("sweep", "failed"),
    }
    assert sorted(row["origin"] for row in rows).count("imported") == 2


def test_old_history_lists_the_same_rows(old_db, capsys):
    rows = json.loads(cli(capsys, "history", "--json", "--db", old_db))
    old = json.loads((OLD / "history.json").read_text())
    executions = {row["run_id"]: row.pop("execution", "absent") for row in rows}
    renamed = [{(k if k != "steady_epoch_seconds" else "median_epoch_seconds"): v for k, v in r.items()} for r in rows]
    assert renamed == old  # every old field, in the old order, with the old values
    for row in old:
        config = json.loads(cli(capsys, "export", row["run_id"], "--db", old_db))["config"]
        expected = EXECUTIONS[config["execution"]] if row["kind"] == "train" else "absent"
        assert executions[row["run_id"]] == expected
    text = cli(capsys, "history", "--db", old_db)
    assert as_old_table(text) == (OLD / "history.txt").read_text()
    head, *lines = text.partition("\n\n")[0].splitlines()
    at = head.index("EXECUTION")
    execution = {line.split()[0]: line[at:].split()[0] for line in lines}
    assert execution == {k: v if v != "absent" else "?" for k, v in executions.items() if k in execution}


@pytest.mark.parametrize("run_id", IDS)
def test_old_history_exports_byte_for_byte(old_db, run_id, capsys):
    assert cli(capsys, "export", run_id, "--db", old_db) == (OLD / f"{run_id}.json").read_text()
    new = cli(capsys, "export", "--csv", run_id, "--db", old_db)
    assert without_execution(new) == old_csv(run_id)


@pytest.mark.parametrize("name", ["imported_run.json", "imported_sweep.json"])
def test_old_run_files_import_and_export_as_before(name, tmp_path, capsys):
    db = str(tmp_path / "fresh.sqlite3")
    assert main(["import", str(OLD / name), "--db", db]) == 0
    run_id = json.loads((OLD / name).read_text())["run_id"]
    capsys.readouterr()
    assert json.loads(cli(capsys, "export", run_id, "--db", db)) == json.loads((OLD / f"{run_id}.json").read_text())
    assert without_execution(cli(capsys, "export", "--csv", run_id, "--db", db)) == old_csv(run_id)
