"""Saving what can be read from a damaged history into a new file, ending with one sentence of counts.

PRAGMA integrity_check runs first and its first finding is quoted. Ids are gathered from the runs table and,
where a damaged page cuts that scan short, from its primary-key index; each run is then read on its own, and
a run whose epochs cannot all be read keeps those that can (read one by one). Nothing is written to the
damaged file: it is opened read-only.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

from core.history import tables
from core.history.database import connect
from core.history.limits import RunFileError
from core.history.paths import StoreError, check_path
from core.i18n import _
from core.results import SWEEP_KIND, RunResult, SweepResult

_ID_SCANS = (
    "SELECT run_id FROM runs",
    "SELECT run_id FROM runs INDEXED BY sqlite_autoindex_runs_1",  # only the index's pages: a covering scan
    "SELECT run_id FROM runs ORDER BY rowid DESC",  # the table from its other end, past a damaged page
)
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
        damaged = sqlite3.connect(f"file:{src_path}?mode=ro", uri=True, timeout=1)
        found = _integrity(damaged)
    except sqlite3.Error as err:
        said = _("The run history {path} cannot be opened at all ({problem}); nothing can be saved.")
        raise StoreError(said.format(path=src_path, problem=err)) from None
    try:
        _require_history(damaged, src_path)
        ids = _ids(damaged)
        out = connect(dst_path)
        try:
            counts = _copy(damaged, out, ids)
        finally:
            out.close()
    finally:
        damaged.close()
    runs, partial, sweeps, lost = counts
    # Of the results found, not of the runs read: a row that cannot be read is of no known kind (bench: 40 ids, 3 lost).
    said = _(
        "Salvaged {saved} of the {count} results found in {src} ({runs} runs, {partial} of them missing some epochs, "
        "and {sweeps} sweeps) into {dst}; {lost} could not be read (integrity check: {found})."
    )
    counted = {"runs": runs, "partial": partial, "sweeps": sweeps, "lost": lost, "found": found}
    return said.format(saved=runs + sweeps, count=len(ids), src=src_path, dst=dst_path, **counted)


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
    if result.status == "running":  # its writer is gone with the damaged file
        result.status, result.error = "interrupted", "Salvaged from a damaged history while it was running."
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
                f"SELECT kind, payload, {tables.RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
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
            _write(out, result, columns[-1])
        except (ValueError, TypeError, RunFileError, StoreError, sqlite3.Error):
            lost += 1
            continue
        found[kind], partial = found[kind] + 1, partial + (not complete)
    return found["train"], partial, found[SWEEP_KIND], lost


def _epochs(db: sqlite3.Connection, run_id: str) -> tuple[list[tuple[str, str]], bool]:
    """(run_id, metrics) rows in epoch order, and whether all of them could be read."""
    try:
        return db.execute(
            "SELECT run_id, metrics FROM epochs WHERE run_id = ? ORDER BY epoch", (run_id,)
        ).fetchall(), True
    except sqlite3.Error:
        pass
    rows = []
    for epoch in range(1, MAX_EPOCH + 1):
        try:
            rows += db.execute("SELECT run_id, metrics FROM epochs WHERE run_id = ? AND epoch = ?", (run_id, epoch))
        except sqlite3.Error:
            continue
    return rows, False


def _write(out: sqlite3.Connection, result: RunResult | SweepResult, origin: str) -> None:
    out.execute("BEGIN IMMEDIATE")
    try:
        tables.write(out, result, origin)
        out.execute("COMMIT")
    except BaseException:
        if out.in_transaction:
            out.execute("ROLLBACK")
        raise
