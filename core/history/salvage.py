"""Saving what can be read from a damaged history into a new file, ending with one sentence of counts.

PRAGMA integrity_check runs first and its first finding is quoted. Ids are gathered from the runs table and,
where a damaged page cuts that scan short, from its primary-key index; each run is then read on its own, and
a run whose epochs cannot all be read keeps those that can (read one by one). A file cut short of its header's
size is read through a copy rebuilt from its surviving pages (core/history/truncated.py), and the sentence says
how many of its pages are left. Nothing is written to the damaged file: it is opened read-only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.history import tables, truncated
from core.history.database import connect
from core.history.limits import RunFileError
from core.history.paths import StoreError, check_path
from core.language.i18n import _
from core.results import SWEEP_KIND, RunResult, SweepResult
from core.results.states import State

_ID_SCANS = (
    "SELECT run_id FROM runs",
    "SELECT run_id FROM runs INDEXED BY sqlite_autoindex_runs_1",  # only the index's pages: a covering scan
    "SELECT run_id FROM runs ORDER BY rowid DESC",  # the table from its other end, past a damaged page
)
TABLES = ("runs", "epochs")  # what a file cut short is rebuilt with (core/history/truncated.py)
MAX_EPOCH = 1000  # TrainConfig's limit: one-by-one epoch reads stop here


def salvage(src: str | os.PathLike, dst: str | os.PathLike) -> str:
    """Copy every readable run and sweep of the history `src` into the new file `dst`; one sentence with counts."""
    src_path, dst_path = check_path(src, "salvage "), check_path(dst, "salvage ")
    if not src_path.exists():
        raise StoreError(_("The run history {path} does not exist.").format(path=src_path))
    if dst_path.exists():
        said = _("{path} already exists; salvage writes a new file, so name one that does not exist.")
        raise StoreError(said.format(path=dst_path))
    try:
        short = truncated.cut(src_path)
        damaged = sqlite3.connect(f"file:{src_path}?mode=ro", uri=True, timeout=1)
        found = _integrity(damaged)
    except (sqlite3.Error, OSError) as err:
        said = _("The run history {path} cannot be opened at all ({problem}); nothing can be saved.")
        raise StoreError(said.format(path=src_path, problem=err)) from None
    try:
        _require_history(damaged, src_path)
    finally:
        damaged.close()
    try:
        readable = truncated.rebuilt(src_path, short, dst_path.parent, TABLES) if short else None
        with readable or contextlib.nullcontext(src_path) as path:
            ids, counts = _salvage(path, dst_path)
    except OSError as err:  # the rebuilt copy of a file cut short, made beside the new file
        said = _("Salvage could not write its working copy of {path} in {folder} ({problem}); nothing was written.")
        raise StoreError(said.format(path=src_path, folder=dst_path.parent, problem=err)) from None
    return _said(src_path, dst_path, len(ids), counts, found, short)


def _salvage(path: Path, dst: Path) -> tuple[list[str], tuple[int, ...]]:
    """The ids found in the history at `path` and what _copy saved of them into the new file `dst`."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as damaged:
        ids = _ids(damaged)
        out = connect(dst)
        try:
            return ids, _copy(damaged, out, ids)
        finally:
            out.close()


def _said(src: Path, dst: Path, count: int, counts: tuple[int, ...], found: str, short: truncated.Cut | None) -> str:
    runs, partial, sweeps, lost = counts
    if short is not None and count == 0:  # never "0 of the 0 results found" when the header says more was there
        said = _(
            "Salvaged nothing from {src} into {dst}: the file is cut short, holding {kept} of the {pages} pages its "
            "header gives, and no result could be read on them (integrity check: {found})."
        )
        return said.format(src=src, dst=dst, kept=short.kept, pages=short.pages, found=found)
    # Of the results found, not of the runs read: a row that cannot be read is of no known kind (bench: 40 ids, 3 lost).
    said = _(
        "Salvaged {saved} of the {count} results found in {src} ({runs} runs, {partial} of them missing some epochs, "
        "and {sweeps} sweeps) into {dst}; {lost} could not be read (integrity check: {found})."
    )
    counted = {"runs": runs, "partial": partial, "sweeps": sweeps, "lost": lost, "found": found}
    said = said.format(saved=runs + sweeps, count=count, src=src, dst=dst, **counted)
    if short is None:
        return said
    cut = _(
        "The file is cut short: it holds {kept} of the {pages} pages its header gives; what was on the rest is lost."
    )
    return f"{said} {cut.format(kept=short.kept, pages=short.pages)}"


def _require_history(db: sqlite3.Connection, path: os.PathLike) -> None:
    """StoreError, before any new file is made, unless `db` is an SQLite file with a runs table (a history)."""
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as err:
        if "not a database" in str(err) or "encrypted" in str(err):
            said = _("{path} is not an SQLite file ({problem}), so not a run history; nothing was written.")
            raise StoreError(said.format(path=path, problem=err)) from None
        return  # a damaged schema page: the scans below still find what they can
    if "runs" not in tables:
        said = _("{path} is an SQLite file without a runs table, so not a run history; nothing was written.")
        raise StoreError(said.format(path=path))


def _integrity(db: sqlite3.Connection) -> str:
    try:
        rows = [row[0] for row in db.execute("PRAGMA integrity_check(20)")]
    except sqlite3.Error as err:
        return str(err)
    return rows[0] if rows == ["ok"] else f"{len(rows)}{'+' if len(rows) == 20 else ''} problems, first: {rows[0]}"


def _ids(db: sqlite3.Connection) -> list[str]:
    ids: dict[str, None] = {}
    for sql in _ID_SCANS:
        try:
            for (run_id,) in db.execute(sql):
                ids[run_id] = None
        except sqlite3.Error:
            continue  # what the scan read before the damaged page is kept
    return list(ids)


def _run_row(db: sqlite3.Connection, run_id: str, _: str | None, columns: tuple) -> tuple[RunResult, bool]:
    epochs, complete = _epochs(db, run_id)
    result = tables.read_runs([columns], epochs)[run_id]
    if result.status == State.RUNNING:  # its writer is gone with the damaged file
        result.status, result.error = State.INTERRUPTED, "Salvaged from a damaged history while it was running."
    return result, complete


def _sweep_row(_: sqlite3.Connection, run_id: str, payload: str | None, __: tuple) -> tuple[SweepResult, bool]:
    return tables.read_sweep(run_id, payload), True


# A runs row's kind -> how it is read back: (the result, whether all of it could be read).
READERS: dict[str, Callable[..., tuple[Any, bool]]] = {"train": _run_row, SWEEP_KIND: _sweep_row}


def _copy(db: sqlite3.Connection, out: sqlite3.Connection, ids: list[str]) -> tuple[int, ...]:
    found: Counter[str] = Counter()
    partial = lost = 0
    for run_id in ids:
        try:
            row = db.execute(
                f"SELECT kind, payload, {_run_columns(db)} FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
        except sqlite3.Error:
            lost += 1
            continue
        if row is None:  # an id an index still names, whose row was on the damaged page
            lost += 1
            continue
        kind, payload, columns = row[0], row[1], row[2:]
        if kind not in READERS:
            lost += 1  # a kind this version does not know: left for a newer one to salvage
            continue
        try:
            result, complete = READERS[kind](db, run_id, payload, columns)
            result.trace = _trace(db, run_id) if isinstance(result, RunResult) else None
            _write(out, result, columns[tables.RUN_COLUMNS.split(", ").index("origin")])
        except (ValueError, TypeError, RunFileError, StoreError, sqlite3.Error):
            lost += 1
            continue
        found[kind], partial = found[kind] + 1, partial + (not complete)
    return found["train"], partial, found[SWEEP_KIND], lost


def _run_columns(db: sqlite3.Connection) -> str:
    """RUN_COLUMNS as this file has them: a file from before schema 3 of the history has no measured column."""
    try:
        have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    except sqlite3.Error:
        have = set()
    return ", ".join(c if c in have or not have else "NULL" for c in tables.RUN_COLUMNS.split(", "))


def _trace(db: sqlite3.Connection, run_id: str) -> bytes | None:
    """The run's profiler trace where the file has one and its pages are readable."""
    try:
        row = db.execute("SELECT xspace FROM traces WHERE run_id = ?", (run_id,)).fetchone()
    except sqlite3.Error:
        return None
    return bytes(row[0]) if row else None


def _epochs(db: sqlite3.Connection, run_id: str) -> tuple[list[tuple[str, str]], bool]:
    """(run_id, metrics) rows in epoch order, and whether all of them could be read: as many as the run's row counts
    (a file cut short reads as if the epochs on its lost pages had never been there)."""
    try:
        rows = db.execute("SELECT run_id, metrics FROM epochs WHERE run_id = ? ORDER BY epoch", (run_id,)).fetchall()
        return rows, len(rows) >= _epochs_done(db, run_id)
    except sqlite3.Error:
        pass
    rows = []
    for epoch in range(1, MAX_EPOCH + 1):
        try:
            rows += db.execute("SELECT run_id, metrics FROM epochs WHERE run_id = ? AND epoch = ?", (run_id, epoch))
        except sqlite3.Error:
            continue
    return rows, False


def _epochs_done(db: sqlite3.Connection, run_id: str) -> int:
    """The epochs the run's row says are stored (its summary); 0 where a history from before the summary has none."""
    try:
        row = db.execute("SELECT epochs_done FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    except sqlite3.Error:
        return 0
    return row[0] if row and isinstance(row[0], int) else 0


def _write(out: sqlite3.Connection, result: RunResult | SweepResult, origin: str) -> None:
    out.execute("BEGIN IMMEDIATE")
    with out:
        tables.write(out, result, origin)
