"""The history file itself: where it lives, its tables by schema version, opening it up to date, dead writers.

One SQLite file in WAL mode, so the dashboard can read while a CLI or the runner writes. The schema's
version is PRAGMA user_version and MIGRATIONS brings an older file up to date. Runs left `running` by a
process that has since died become `interrupted` when the file is opened.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import uuid
from pathlib import Path

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


def connect(path: Path) -> sqlite3.Connection:
    """The history file at `path`, created or migrated to SCHEMA, with dead writers' runs marked interrupted."""
    db = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE), so a write is all or nothing.
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL survives any crash of this process; only a power cut can lose the last epoch.
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        _migrate(db, path)
        _recover(db)
        return db
    except (sqlite3.Error, OSError, StoreError) as err:
        if db is not None:
            db.close()
        if isinstance(err, StoreError):
            raise
        raise StoreError(f"The run history {path} cannot be opened ({err}); set {DB_ENV} or --db.") from None


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA:
        raise StoreError(
            f"The run history {path} was written by a newer version of this app (schema {version}; "
            f"this one reads up to {SCHEMA}); update the app or use another --db."
        )
    if version == SCHEMA:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for statements in MIGRATIONS[version:]:
            for sql in statements:
                db.execute(sql)
        db.execute(f"PRAGMA user_version = {SCHEMA}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _recover(db: sqlite3.Connection) -> None:
    """Mark runs whose writer died on this host `interrupted`; their finished epochs stay."""
    here = socket.gethostname()
    rows = db.execute(
        "SELECT run_id, owner_pid, owner_token FROM runs WHERE status = 'running' AND owner_host = ?", (here,)
    ).fetchall()
    gone = [(run_id, pid) for run_id, pid, token in rows if pid is None or not process_alive(pid, token)]
    if not gone:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for run_id, pid in gone:
            db.execute(
                "UPDATE runs SET status = 'interrupted', error = ?, owner_host = NULL, owner_pid = NULL,"
                " owner_token = NULL WHERE run_id = ? AND status = 'running'",
                (f"The process that ran it (pid {pid} on {here}) ended before the run finished.", run_id),
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def process_token(pid: int) -> str | None:
    """The process's start time from /proc, so a recycled pid is not mistaken for the writer."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            after_name = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return "Z" if after_name[0] in "ZX" else after_name[19]


def process_alive(pid: int, token: str | None) -> bool:
    """Whether the process that began a run still runs (and is the same process, not a recycled pid)."""
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
    now = process_token(pid)
    return now != "Z" and (token is None or now is None or now == token)
