"""Run history in SQLite: each epoch written as it finishes, readable from any thread or process.

One file (WAL mode, so the dashboard can read while a CLI or the runner writes); the schema's
version is PRAGMA user_version and MIGRATIONS brings an older file up to date. Runs left
`running` by a process that has since died become `interrupted` when the file is opened.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from core.history.importer import (
    ImportOutcome,
    RunFileError,
    content_id,
    parse_result_file,
    parse_run_file,
    read_result_file,
    read_run_file,
)
from core.history.rows import HistoryRow, history_row, result_csv
from core.history.sweep_history import SweepHistory
from core.results import EpochMetrics, RunResult, utc_now
from core.sweep_results import SweepResult

DB_ENV = "TFDASH_DB"
APP_DIR = "tfdash"
DB_FILE = "runs.sqlite3"

# Migration N takes the file from user_version N-1 to N. Append; never edit a released one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL DEFAULT 'train',   -- other kinds (a batch-size sweep) keep their JSON in payload
            status TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            config TEXT NOT NULL DEFAULT '{}',
            host TEXT NOT NULL DEFAULT '{}',
            device TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            started_at TEXT,
            finished_at TEXT,
            stored_at TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT 'local', -- 'local' or 'imported'
            owner_host TEXT,                      -- while running: who writes it, to spot a dead writer
            owner_pid INTEGER,
            owner_token TEXT,
            payload TEXT
        )""",
        "CREATE INDEX runs_by_kind_time ON runs (kind, started_at)",
        """CREATE TABLE epochs (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            epoch INTEGER NOT NULL,
            metrics TEXT NOT NULL,                -- EpochMetrics as JSON: new fields need no migration
            PRIMARY KEY (run_id, epoch)
        ) WITHOUT ROWID""",
    ),
)
SCHEMA = len(MIGRATIONS)


class StoreError(RuntimeError):
    """The history file cannot be opened, read or written; the sentence names the file."""


def default_db_path() -> Path:
    """$TFDASH_DB, else $XDG_DATA_HOME/tfdash/runs.sqlite3, else ~/.local/share/tfdash/runs.sqlite3."""
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data_home) / APP_DIR / DB_FILE


def new_run_id() -> str:
    """A fresh run id: 12 hex digits."""
    return uuid.uuid4().hex[:12]


def _process_token(pid: int) -> str | None:
    """The process's start time from /proc, so a recycled pid is not mistaken for the writer."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            after_name = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return "Z" if after_name[0] in "ZX" else after_name[19]


def _process_alive(pid: int, token: str | None) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":  # os.kill(pid, 0) would terminate it on Windows; assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by someone else
    now = _process_token(pid)
    return now != "Z" and (token is None or now is None or now == token)


_RUN_COLUMNS = "run_id, status, schema_version, config, host, device, error, started_at, finished_at, origin"
_EPOCH_FIELDS = {f.name for f in fields(EpochMetrics)}
_RECORD_TEXT = ("started_at", "finished_at", "error")  # a record's payload fields copied to their columns


class Store(SweepHistory):
    """The run history (training runs, and sweeps: see SweepHistory). One connection guarded by a lock."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path).expanduser() if path else default_db_path()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE in _tx).
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL survives any crash of this process; only a power cut can lose the last epoch.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
            self._recover()
        except (sqlite3.Error, OSError, StoreError) as err:
            if hasattr(self, "_db"):
                self._db.close()
            if isinstance(err, StoreError):
                raise
            raise StoreError(f"The run history {self.path} cannot be opened ({err}); set {DB_ENV} or --db.") from None

    def close(self) -> None:
        """Close the file (the last connection to close folds the WAL back into it)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- plumbing ----------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it lands, or none of it."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as err:
                raise StoreError(f"The run history {self.path} cannot be written ({err}).") from None

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as err:
                raise StoreError(f"The run history {self.path} cannot be read ({err}).") from None

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA:
            raise StoreError(
                f"The run history {self.path} was written by a newer version of this app (schema {version}; "
                f"this one reads up to {SCHEMA}); update the app or use another --db."
            )
        if version == SCHEMA:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
            for statements in MIGRATIONS[version:]:
                for sql in statements:
                    self._db.execute(sql)
            self._db.execute(f"PRAGMA user_version = {SCHEMA}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _recover(self) -> None:
        """Mark runs whose writer died on this host `interrupted`; their finished epochs stay."""
        here = socket.gethostname()
        rows = self._db.execute(
            "SELECT run_id, owner_pid, owner_token FROM runs WHERE status = 'running' AND owner_host = ?", (here,)
        ).fetchall()
        gone = [(run_id, pid) for run_id, pid, token in rows if pid is None or not _process_alive(pid, token)]
        if not gone:
            return
        with self._tx() as db:
            for run_id, pid in gone:
                db.execute(
                    "UPDATE runs SET status = 'interrupted', error = ?, owner_host = NULL, owner_pid = NULL,"
                    " owner_token = NULL WHERE run_id = ? AND status = 'running'",
                    (f"The process that ran it (pid {pid} on {here}) ended before the run finished.", run_id),
                )

    # -- a run as it happens (the runner and the CLI) ------------------------------------
    def begin(self, run_id: str, config: Any, started_at: str | None = None) -> None:
        """Record a run that is starting now, owned by this process (TrainConfig or its dict)."""
        config_dict = config.to_dict() if hasattr(config, "to_dict") else dict(config)
        pid = os.getpid()
        with self._tx() as db:
            db.execute(
                "INSERT INTO runs (run_id, status, schema_version, config, device, started_at, stored_at,"
                " owner_host, owner_pid, owner_token) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    RunResult.schema_version,
                    json.dumps(config_dict),
                    json.dumps({"requested": config_dict.get("device")}),
                    started_at or utc_now(),
                    utc_now(),
                    socket.gethostname(),
                    pid,
                    _process_token(pid),
                ),
            )

    def add_epoch(self, run_id: str, metrics: EpochMetrics, result: RunResult | None = None) -> None:
        """Write one finished epoch (and the run's host and device info so far) in one transaction."""
        with self._tx() as db:
            if result is not None:
                db.execute(
                    "UPDATE runs SET host = ?, device = ?, started_at = COALESCE(?, started_at) WHERE run_id = ?",
                    (_json(result.host), _json(result.device), result.started_at, run_id),
                )
            self._write_epochs(db, run_id, [metrics])

    def finish(self, result: RunResult, origin: str = "local") -> None:
        """Write a run's final state and every epoch it has (inserting the run if it was never begun)."""
        with self._tx() as db:
            self._upsert(db, result, origin)
            self._write_epochs(db, result.run_id, result.epochs)

    def mark(self, run_id: str, status: str, error: str | None = None) -> None:
        """Set a run's final status when there is no result to finish it with."""
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET status = ?, error = ?, finished_at = ?, owner_host = NULL, owner_pid = NULL,"
                " owner_token = NULL WHERE run_id = ?",
                (status, error, utc_now(), run_id),
            )

    def _upsert(self, db: sqlite3.Connection, result: RunResult, origin: str) -> None:
        if not result.run_id:
            raise StoreError("A run needs a run_id to be stored.")
        db.execute(
            f"INSERT INTO runs ({_RUN_COLUMNS}, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, schema_version = excluded.schema_version,"
            " config = excluded.config, host = excluded.host, device = excluded.device, error = excluded.error,"
            " started_at = excluded.started_at, finished_at = excluded.finished_at,"
            " owner_host = NULL, owner_pid = NULL, owner_token = NULL",
            (
                result.run_id,
                result.status,
                result.schema_version,
                _json(result.config),
                _json(result.host),
                _json(result.device),
                result.error,
                result.started_at,
                result.finished_at,
                origin,
                utc_now(),
            ),
        )

    def _write_epochs(self, db: sqlite3.Connection, run_id: str | None, epochs: Iterable[EpochMetrics]) -> None:
        for m in epochs:
            db.execute(
                "INSERT OR REPLACE INTO epochs (run_id, epoch, metrics) VALUES (?, ?, ?)",
                (run_id, m.epoch, _json(asdict(m))),
            )

    # -- importing and exporting files ---------------------------------------------
    def import_bytes(self, data: bytes) -> ImportOutcome:
        """Add a run from a JSON file's bytes; raises RunFileError (store unchanged) for a bad file."""
        return self._add_imported(parse_run_file(data))

    def import_file(self, path: str | os.PathLike) -> ImportOutcome:
        """Add a run from a JSON file written by `python -m core train --json` or export."""
        return self._add_imported(read_run_file(path))

    def import_result_bytes(self, data: bytes) -> ImportOutcome:
        """Add a training run or a sweep from a JSON file's bytes; raises RunFileError (store unchanged) for a bad file."""
        result = parse_result_file(data)
        return self._IMPORTERS[type(result)](self, result)

    def import_result_file(self, path: str | os.PathLike) -> ImportOutcome:
        """Add a training run or a sweep from a JSON file (train --json, sweep --json or export)."""
        result = read_result_file(path)
        return self._IMPORTERS[type(result)](self, result)

    def _add_imported(self, result: RunResult) -> ImportOutcome:
        if result.run_id is None:  # an id-less file: its content names it, so a second import matches
            result.run_id = content_id(result)
        with self._tx():  # check and insert in one transaction, so two importers cannot both add it
            existing = self.get(result.run_id)
            if existing is None:
                self._upsert(self._db, result, "imported")
                self._write_epochs(self._db, result.run_id, result.epochs)
                return ImportOutcome(result.run_id, True, result)
        if existing.to_dict() != result.to_dict():
            raise RunFileError(
                f"A different run with id {result.run_id} is already in the history; delete it there to replace it."
            )
        return ImportOutcome(result.run_id, False, existing)

    _IMPORTERS = {RunResult: _add_imported, SweepResult: SweepHistory._add_imported_sweep}

    def export_json(self, run_id: str) -> str:
        """A run or a sweep as the file `train --json` or `sweep --json` writes (raises KeyError if unknown)."""
        return self._must_get(run_id).to_json()

    def export_csv(self, run_id: str) -> str:
        """A run's epochs or a sweep's points as CSV (raises KeyError if unknown)."""
        return result_csv(self._must_get(run_id))

    def _must_get(self, run_id: str) -> RunResult | SweepResult:
        result = self.get(run_id) or self.get_sweep(run_id)
        if result is None:
            raise KeyError(run_id)
        return result

    # -- reading ---------------------------------------------------------------------
    def get(self, run_id: str) -> RunResult | None:
        """One training run as a RunResult, or None."""
        found = self.load([run_id])
        return found[0] if found else None

    def load(self, run_ids: Iterable[str]) -> list[RunResult]:
        """Several runs as RunResults (to overlay on one chart), in the order asked; unknown ids are skipped."""
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._query(f"SELECT {_RUN_COLUMNS} FROM runs WHERE kind = 'train' AND run_id IN ({marks})", ids)
        found = self._results(rows)
        return [found[i] for i in ids if i in found]

    def history(self, limit: int | None = None) -> list[HistoryRow]:
        """Training runs, newest first: the dashboard's History table and `python -m core history`."""
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE kind = 'train'"
            " ORDER BY COALESCE(started_at, stored_at) DESC LIMIT ?",
            (-1 if limit is None else limit,),
        )
        origins = {row[0]: row[-1] for row in rows}
        return [history_row(r, origins[r.run_id]) for r in self._results(rows).values()]

    def _results(self, rows: list[tuple]) -> dict[str, RunResult]:
        if not rows:
            return {}
        ids = [row[0] for row in rows]
        marks = ", ".join("?" * len(ids))
        epochs: dict[str, list[EpochMetrics]] = {i: [] for i in ids}
        for run_id, metrics in self._query(
            f"SELECT run_id, metrics FROM epochs WHERE run_id IN ({marks}) ORDER BY run_id, epoch", ids
        ):
            values = json.loads(metrics)
            epochs[run_id].append(EpochMetrics(**{k: v for k, v in values.items() if k in _EPOCH_FIELDS}))
        results = {}
        for run_id, status, version, config, host, device, error, started, finished, _origin in rows:
            results[run_id] = RunResult(
                config=json.loads(config),
                host=json.loads(host),
                device=json.loads(device),
                status=status,
                error=error,
                epochs=epochs[run_id],
                started_at=started,
                finished_at=finished,
                run_id=run_id,
                schema_version=version,
            )
        return results

    def delete(self, run_id: str) -> bool:
        """Remove a run and its epochs, or a sweep; False if there was none."""
        with self._tx() as db:
            db.execute("DELETE FROM epochs WHERE run_id = ?", (run_id,))
            return db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0

    # -- other kinds of result (e.g. a batch-size sweep), stored as one JSON document ---------
    def save_record(
        self, kind: str, payload: dict[str, Any], run_id: str | None = None, status: str = "completed"
    ) -> str:
        """Store (or replace) a non-training result as JSON under `kind`; returns its id."""
        if kind == "train":
            raise ValueError("training runs are stored with finish(), not save_record().")
        run_id = run_id or new_run_id()
        with self._tx() as db:
            changed = self._write_record(db, kind, payload, run_id, status)
        if not changed:
            raise ValueError(f"id {run_id} is already used by a result of another kind.")
        return run_id

    def _write_record(
        self, db: sqlite3.Connection, kind: str, payload: dict, run_id: str, status: str, origin: str = "local"
    ) -> int:
        """Insert or replace a record of `kind` (0 rows if the id is another kind's), its times in their columns."""
        started, finished, error = (v if isinstance(v, str) else None for v in map(payload.get, _RECORD_TEXT))
        return db.execute(
            "INSERT INTO runs (run_id, kind, status, schema_version, payload, started_at, finished_at, error, origin,"
            " stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, payload = excluded.payload,"
            " started_at = excluded.started_at, finished_at = excluded.finished_at, error = excluded.error"
            " WHERE runs.kind = excluded.kind",
            (
                run_id,
                kind,
                status,
                payload.get("schema_version", 1),
                _json(payload),
                started,
                finished,
                error,
                origin,
                utc_now(),
            ),
        ).rowcount

    def records(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        """(id, payload) for every stored result of `kind`, newest first."""
        rows = self._query("SELECT run_id, payload FROM runs WHERE kind = ? ORDER BY stored_at DESC", (kind,))
        return [(run_id, json.loads(payload or "{}")) for run_id, payload in rows]

    # -- health ----------------------------------------------------------------------
    def integrity_check(self) -> str:
        """SQLite's PRAGMA integrity_check: 'ok' for a sound file."""
        return "; ".join(row[0] for row in self._query("PRAGMA integrity_check"))

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the main file (so the file alone holds everything)."""
        self._query("PRAGMA wal_checkpoint(TRUNCATE)")


def _json(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError as err:  # NaN or infinity: JSON (and the file format) has no such number
        raise StoreError(f"A run cannot be stored: {err}.") from None


_stores: dict[Path, Store] = {}
_stores_lock = threading.Lock()


def get_store(path: str | os.PathLike | None = None) -> Store:
    """The process-wide Store for `path` (default: default_db_path(), read now); opened once."""
    resolved = (Path(path).expanduser() if path else default_db_path()).resolve()
    with _stores_lock:
        if resolved not in _stores:
            _stores[resolved] = Store(resolved)
        return _stores[resolved]


def attach(runner: Any, store: Store | None = None) -> None:
    """Persist a Runner's jobs: training runs epoch by epoch, other kinds whole; store None = get_store() then."""
    from core.config import TrainConfig

    writing: dict[str, Store] = {}  # run_id -> the store its first event went to

    def on_event(event: str, job: Any, payload: Any) -> None:
        if not isinstance(job.config, TrainConfig):
            # Other kinds (a sweep) are stored whole when they finish, if their result says its kind.
            result = job.result
            if event == "finished" and hasattr(result, "kind") and hasattr(result, "to_dict"):
                (store or get_store()).save_record(result.kind, result.to_dict(), job.run_id, job.state)
            return
        if event == "started":
            target = writing[job.run_id] = store or get_store()
            target.begin(job.run_id, job.config)
            return
        target = writing.get(job.run_id)
        if target is None:
            return  # cancelled while queued: never started, nothing to keep
        if event == "epoch":
            target.add_epoch(job.run_id, payload, job.result)
        elif event == "finished":
            del writing[job.run_id]
            if isinstance(job.result, RunResult):
                target.finish(job.result)
            else:
                target.mark(job.run_id, "failed", getattr(job, "error_text", None))

    runner.add_listener(on_event)
