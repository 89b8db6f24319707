"""The run history: one Store for training runs (each epoch written as it finishes) and sweeps (stored whole).

Readable from any thread or process (core.history.database opens the file). A sweep, or any other
kind of result, is kept as its file's JSON in a runs row of its kind; a stored sweep read back is checked
as an imported file is, and one that fails is listed with the reason, never hidden.

One write per event: begin (a run starts), add_epoch (an epoch finished), finish (a job ended with its result),
mark (it ended without one); one way in for a file: import_file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.history import database, paths, recorder, summary, tables
from core.history.database import connect, new_run_id, open_read_only, open_reader, process_token
from core.history.exchange import FileExchange
from core.history.importer import RunFileError
from core.history.paths import StoreError, default_db_path
from core.history.rows import HistoryRow, SweepRow, sweep_row, unreadable_sweep_row
from core.language.i18n import _
from core.results import SWEEP_KIND, EpochMetrics, RunResult, SweepResult, utc_now

__all__ = ["Store", "StoreError", "attach", "default_db_path", "get_store", "new_run_id"]


class Store(FileExchange):
    """The run history of training runs and sweeps: one connection writes, another reads, each behind its lock.

    In WAL mode a reader never waits for a writer, so the History view lists while this process's writer waits
    for another process's lock. A file marked read-only is opened read-only: listed and exported, never changed.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool | None = None):
        self.path = default_db_path() if path is None else paths.check_path(path)
        self.lock_timeout = paths.lock_timeout()
        self.read_only = paths.is_read_only(self.path) if read_only is None else read_only
        self._write_lock, self._read_lock = threading.RLock(), threading.Lock()
        self._running: dict[str, summary.Running] = {}  # runs recording epoch by epoch: their summaries so far
        if self.read_only:
            self._writer, self._reader = None, open_read_only(self.path, self.lock_timeout)
        else:
            self._writer = connect(self.path, self.lock_timeout)
            try:
                self._reader = open_reader(self.path, self.lock_timeout)
            except StoreError:
                self._writer.close()
                raise

    def close(self) -> None:
        """Close the file (the last connection to close folds the WAL back into it)."""
        with self._write_lock, self._read_lock:
            self._reader.close()
            if self._writer is not None:
                self._writer.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it lands, or none of it; a held lock is waited for lock_timeout s."""
        if self._writer is None:
            raise paths.read_only_error(self.path)
        db = self._writer
        with self._write_lock:
            try:
                db.execute("BEGIN IMMEDIATE")
                with db:  # commits, or rolls back (a full disk has already rolled it back: a no-op)
                    yield db
            except sqlite3.Error as err:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise paths.write_error(self.path, err, self.lock_timeout) from None

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._read_lock:
            try:
                return self._reader.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as err:
                raise paths.read_error(self.path, err) from None

    # -- a run as it happens (the runner and the CLI) ------------------------------------
    def begin(self, run_id: str, config: Any, started_at: str | None = None) -> None:
        """Record a run that is starting now, owned by this process (TrainConfig or its dict)."""
        config_dict = config.to_dict() if hasattr(config, "to_dict") else dict(config)
        pid = os.getpid()
        database.LIVE.add(run_id)  # before its row exists: a listing never takes this process's new row for a dead one
        try:
            with self._tx() as db:
                tables.insert_running(db, run_id, config_dict, pid, process_token(pid), started_at)
        except BaseException:
            database.LIVE.discard(run_id)
            raise

    def add_epoch(self, run_id: str, metrics: EpochMetrics, result: RunResult | None = None) -> None:
        """Write one finished epoch (and the run's host and device info so far) in one transaction."""
        with self._tx() as db:
            tables.require_train(db, run_id)
            if result is not None:
                db.execute(
                    "UPDATE runs SET host = ?, device = ?, measured = ?, started_at = COALESCE(?, started_at)"
                    " WHERE run_id = ?",
                    (
                        tables.to_json(result.host),
                        tables.to_json(result.device),
                        tables.measured_json(result),
                        result.started_at,
                        run_id,
                    ),
                )
            tables.write_epochs(db, run_id, [metrics])
            summary.after_epoch(db, run_id, metrics, self._running.setdefault(run_id, summary.Running()))

    def finish(
        self, result: Any, origin: str = "local", *, run_id: str | None = None, status: str | None = None
    ) -> None:
        """Write a job's result whole: a run with every epoch (inserted if it was never begun), or a sweep or any
        other kind's result as its JSON; run_id and status: the job's, where its result does not carry them."""
        run_id, status = run_id or result.run_id, status or result.status
        with self._tx() as db:
            tables.write(db, result, origin, run_id, status)
        self._ended(run_id)

    def mark(self, run_id: str, status: str, error: str | None = None) -> None:
        """Set a run's final status when there is no result to finish it with."""
        with self._tx() as db:
            tables.require_train(db, run_id)
            db.execute(
                "UPDATE runs SET status = ?, error = ?, finished_at = ?, owner_host = NULL, owner_pid = NULL,"
                " owner_token = NULL WHERE run_id = ?",
                (status, error, utc_now(), run_id),
            )
        self._ended(run_id)

    def _ended(self, run_id: str | None) -> None:
        database.LIVE.discard(run_id)
        self._running.pop(run_id, None)

    # -- reading runs --------------------------------------------------------------------
    def get(self, run_id: str) -> RunResult | None:
        """One training run as a RunResult, or None."""
        found = self.load([run_id])
        return found[0] if found else None

    def load(self, run_ids: Iterable[str]) -> list[RunResult]:
        """Several runs as RunResults (to overlay on one chart), in the order asked; unknown ids are skipped."""
        ids = list(dict.fromkeys(run_ids))
        sql = f"SELECT {tables.RUN_COLUMNS} FROM runs WHERE kind = 'train' AND run_id IN {IDS}"
        rows = self._query(sql, ids_json(ids))
        found = self._results(rows)
        return [found[i] for i in ids if i in found]

    def history(self, limit: int | None = None) -> list[HistoryRow]:
        """Training runs, newest first, from their summaries (no epoch is read): the History table and `history`.
        A row saying `running` with no live job (its process died, or its job here ended unrecorded) is ended first."""
        self._end_stranded()
        rows = self._query(
            f"SELECT {tables.SUMMARY_COLUMNS} FROM runs WHERE kind = 'train'"
            " ORDER BY COALESCE(started_at, stored_at) DESC LIMIT ?",
            (-1 if limit is None else limit,),
        )
        return [tables.summary_row(row) for row in rows]

    def _end_stranded(self) -> None:
        # Read first, on the reader: a listing never waits behind this process's writer (or another's lock).
        with self._read_lock:
            try:
                gone = database.stranded(self._reader)
            except sqlite3.Error:
                return  # the listing itself says what is wrong
        if not gone or self._writer is None or not self._write_lock.acquire(blocking=False):
            return
        try:
            database.recover_now(self._writer, gone)
        except sqlite3.Error:
            pass  # held by another process: the listing still works, and the next one (or the next start) ends them
        finally:
            self._write_lock.release()

    def _results(self, rows: list[tuple]) -> dict[str, RunResult]:
        ids = ids_json([row[0] for row in rows])
        epochs = self._query(f"SELECT run_id, metrics FROM epochs WHERE run_id IN {IDS} ORDER BY run_id, epoch", ids)
        return tables.read_runs(rows, epochs)

    def ids(self) -> list[tuple[str, str]]:
        """(id, kind) of everything stored, oldest first: what export --all walks."""
        return self._query("SELECT run_id, kind FROM runs ORDER BY COALESCE(started_at, stored_at), run_id")

    # -- reading sweeps and other kinds ------------------------------------------------------
    def sweeps(self, limit: int | None = None) -> list[SweepRow]:
        """Stored sweeps, newest first: the dashboard's list of sweeps and `python -m core history`."""
        rows = self._query(
            "SELECT run_id, payload, origin, status, started_at FROM runs WHERE kind = ?"
            " ORDER BY COALESCE(started_at, stored_at) DESC LIMIT ?",
            (SWEEP_KIND, -1 if limit is None else limit),
        )
        listed = []
        for run_id, payload, origin, status, started_at in rows:
            try:
                listed.append(sweep_row(tables.read_sweep(run_id, payload), origin))
            except RunFileError as err:  # listed with the reason, so nothing stored is hidden
                listed.append(unreadable_sweep_row(run_id, started_at, status, origin, err))
        return listed

    def get_sweep(self, run_id: str) -> SweepResult | None:
        """One sweep as a SweepResult, or None if there is no sweep with that id."""
        rows = self._query("SELECT payload FROM runs WHERE kind = ? AND run_id = ?", (SWEEP_KIND, run_id))
        if not rows:
            return None
        try:
            return tables.read_sweep(run_id, rows[0][0])
        except RunFileError as err:
            said = _("The run history {path} holds sweep {run_id}, which it cannot read: {problem}")
            raise StoreError(said.format(path=self.path, run_id=run_id, problem=err)) from None

    def traced(self, run_ids: Iterable[str]) -> set[str]:
        """Which of these runs have a profiler trace kept (no trace is read)."""
        return {row[0] for row in self._query(f"SELECT run_id FROM traces WHERE run_id IN {IDS}", ids_json(run_ids))}

    def trace(self, run_id: str) -> bytes | None:
        """A run's profiler trace as the engine kept it (an XSpace, gzipped), or None where it has none."""
        rows = self._query("SELECT xspace FROM traces WHERE run_id = ?", (run_id,))
        return bytes(rows[0][0]) if rows else None

    def delete(self, run_id: str) -> bool:
        """Remove a run and its epochs and trace, or a sweep; False if there was none."""
        with self._tx() as db:
            db.execute("DELETE FROM epochs WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM traces WHERE run_id = ?", (run_id,))
            return db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0


IDS = "(SELECT value FROM json_each(?))"  # a list of ids as one parameter: no limit on how many, none for none


def ids_json(run_ids: Iterable[str]) -> tuple[str]:
    """The one parameter IDS reads."""
    return (json.dumps(list(run_ids)),)


_stores: dict[Path, Store] = {}
_stores_lock = threading.Lock()


def get_store(path: str | os.PathLike | None = None) -> Store:
    """The process-wide Store for `path` (default: default_db_path(), read now); opened once."""
    resolved = (default_db_path() if path is None else paths.check_path(path)).resolve()
    with _stores_lock:
        if resolved not in _stores:
            _stores[resolved] = Store(resolved)
        return _stores[resolved]


def attach(runner: Any, store: Store | None = None) -> None:
    """Persist a Runner's jobs as the CLI does: training runs epoch by epoch, other kinds whole; a write the history
    refuses is said on the job (its note) and tried again, never the end of the job. store None: get_store() at each
    job's start."""
    runner.add_listener(recorder.JobsRecorder(store, get_store))
