"""Salvage of a history cut short (`truncate -s 50%`): every run whose pages survive, against what the cut left.

What survives is worked out apart from salvage's own page reader: SQLite's dbstat table, on the whole file, gives
each b-tree page and the overflow pages of each of its cells, and the rows in key order then fall on them in
order (https://www.sqlite.org/dbstat.html). A row whose pages all lie before the cut must come back; one that
needs a page past the page the cut went through cannot; one on that page may.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
from dataclasses import replace

import pytest

from core.cli import main
from core.history import truncated
from core.history.pages import Header
from core.history.store import Store
from core.results import Learned
from tests.sample_runs import make_result
from tests.store_helpers import checkpoint


def history(path) -> list:
    """12 runs of 10 epochs, each last epoch with the softmax templates a real run keeps (about 36 KB: overflow
    pages), written as a run is, epoch by epoch: 130 pages, the epochs' tree three deep."""
    runs = []
    with Store(path) as store:
        for i in range(12):
            run, rng = make_result(run_id=f"run{i:09d}", epochs=10, seed=i), random.Random(i)
            templates = [[rng.randrange(256) for _ in range(784)] for _ in range(10)]
            learned = Learned(list(range(16)), [1] * 16, [2] * 16, templates, 0.5)
            run.epochs[-1] = replace(run.epochs[-1], learned=learned)
            store.begin(run.run_id, run.config, run.started_at)
            for epoch in run.epochs:
                store.add_epoch(run.run_id, epoch, run)
            store.finish(run)
            runs.append(run)
        checkpoint(store)
    return runs


def row_pages(path, table: str, keys: str, order: str) -> dict[tuple, list[int]]:
    """Each row of `table` (its `keys`) -> the pages holding it: its cell's page, then that cell's overflow pages. The
    rows, in `order` (the tree's key order), lie on the cells of its pages in order: an index's interior pages (a
    WITHOUT ROWID table's) hold rows between their children, a table's only the rowids that part them."""
    with sqlite3.connect(path) as db:
        stat = db.execute("SELECT path, pageno, pagetype, ncell FROM dbstat WHERE name = ?", (table,)).fetchall()
        rows = db.execute(f"SELECT {keys} FROM {table} ORDER BY {order}").fetchall()
        (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()
    pages = {at: (number, kind, cells) for at, number, kind, cells in stat}
    overflow: dict[str, set[int]] = {}
    for at, number, kind, _ in stat:
        if kind == "overflow":  # its path: the cell's page's, the cell's number, "+", its place in the chain
            overflow.setdefault(at.split("+")[0], set()).add(number)
    rows_inside = "WITHOUT ROWID" in sql

    def in_order(at: str):  # (page path, cell number) of each row, in key order
        _, kind, cells = pages[at]
        for cell in range(cells):
            if kind == "internal":
                yield from in_order(f"{at}{cell:03x}/")
            if kind == "leaf" or rows_inside:
                yield at, cell
        if kind == "internal":
            yield from in_order(f"{at}{cells:03x}/")

    cells = list(in_order("/"))
    assert len(cells) == len(rows)
    return {
        row: [pages[at][0], *overflow.get(f"{at}{cell:03x}", ())] for row, (at, cell) in zip(rows, cells, strict=True)
    }


def test_each_row_is_found_on_its_pages(tmp_path):
    path = tmp_path / "runs.sqlite3"
    history(path)
    epochs = row_pages(path, "epochs", "run_id, epoch", "run_id, epoch")
    assert len(epochs) == 120 and sorted(len(p) for p in epochs.values())[-12:] == [10] * 12  # 1 + 9 overflow
    with sqlite3.connect(path) as db:
        (interior,) = db.execute(
            "SELECT count(*) FROM dbstat WHERE name = 'epochs' AND pagetype = 'internal'"
        ).fetchone()
    assert interior == 3  # a root and two interior pages, late in the file: rows on their cells are found too
    data = path.read_bytes()
    for (run_id, _), (page, *_) in epochs.items():  # each row's key is on the page its cell is said to be on
        assert run_id.encode() in data[(page - 1) * 4096 : page * 4096], (run_id, page)


def test_read_page_by_page_a_whole_history_gives_back_every_row_exactly(tmp_path):
    # The page reader against SQLite's own reads: every row, overflow chains and the epochs on interior pages too.
    path = tmp_path / "runs.sqlite3"
    history(path)
    whole = truncated.Cut(Header.read(path.read_bytes()[:100]), path.stat().st_size // 4096, 0)
    with truncated.rebuilt(path, whole, tmp_path, ("runs", "epochs")) as copy:
        for table, order in (("runs", "run_id"), ("epochs", "run_id, epoch")):
            with sqlite3.connect(path) as db, sqlite3.connect(copy) as rebuilt:
                expected = db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
                assert rebuilt.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall() == expected


@pytest.mark.parametrize("share", [0.25, 0.50, 0.75])
def test_salvage_of_a_cut_history_brings_back_every_run_whose_pages_survive(tmp_path, capsys, share):
    whole, cut, new = tmp_path / "whole.sqlite3", tmp_path / "cut.sqlite3", tmp_path / "saved.sqlite3"
    runs = {run.run_id: run for run in history(whole)}
    run_rows = {run_id: pages for (run_id,), pages in row_pages(whole, "runs", "run_id", "rowid").items()}
    epoch_rows = row_pages(whole, "epochs", "run_id, epoch", "run_id, epoch")
    shutil.copyfile(whole, cut)
    size = int(whole.stat().st_size * share)  # as `truncate -s 50%` cuts: through a page
    with open(cut, "r+b") as f:
        f.truncate(size)
    kept, total = size // 4096, whole.stat().st_size // 4096  # whole pages left; the header's count

    def survives(pages: list[int]) -> tuple[bool, bool]:  # (surely, possibly): before the cut, or on its page too
        return max(pages) <= kept, max(pages) <= kept + 1

    assert main(["salvage", str(cut), str(new)]) == 0
    said = capsys.readouterr().out.replace("\n", " ")
    with Store(new) as store:
        saved = {run.run_id: run for run in store.load(row.run_id for row in store.history())}
    for run_id, run in runs.items():
        surely, possibly = survives(run_rows[run_id])
        assert surely <= (run_id in saved) <= possibly, run_id
        back = {epoch.epoch: epoch for epoch in saved[run_id].epochs} if run_id in saved else {}
        for epoch in run.epochs if back else ():
            surely, possibly = survives(epoch_rows[(run_id, epoch.epoch)])
            assert surely <= (epoch.epoch in back) <= possibly, (run_id, epoch.epoch)
            assert back.get(epoch.epoch, epoch) == epoch  # what comes back is what was stored
        assert run_id not in saved or saved[run_id].config == run.config
    partial = sum(len(saved[r].epochs) < len(runs[r].epochs) for r in saved)
    assert "0 of the 0" not in said and f" {kept} of the {total} pages its header gives" in said
    if saved:
        found = re.search(r"of the (\d+) results found", said)[1]
        start = f"Salvaged {len(saved)} of the {found} results found in {cut} ({len(saved)} runs, {partial} of them"
        assert said.startswith(start), said
    else:
        assert said.startswith(f"Salvaged nothing from {cut} into {new}: the file is cut short, holding {kept} of")
