"""The history file itself: its tables by schema version, opening it.

One SQLite file in WAL mode, so the dashboard can read while a CLI or the runner writes. The schema's
version is PRAGMA user_version and MIGRATIONS brings an older file up to date. Runs left `running` by a
process that has since died become `interrupted` when the file is opened. A new file is built aside and
linked into place whole, so a 0-byte file at the path is never one of ours and is refused, not reused.
A lock is waited for LOCK_TIMEOUT_S seconds (or $TFDASH_LOCK_TIMEOUT), a bound every sentence states.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import uuid
from pathlib import Path
from urllib.parse import quote

from core.history.migrations import MIGRATIONS as MIGRATIONS
from core.history.paths import DB_ENV, LOCK_TIMEOUT_S, StoreError, is_damaged
from core.language.i18n import N_, _

SCHEMA = len(MIGRATIONS)


def new_run_id() -> str:
    """A fresh run id: 12 hex digits."""
    return uuid.uuid4().hex[:12]


def _open(path: Path, timeout: float, mode: str) -> sqlite3.Connection:
    # A URI with mode=rw never creates a file: a path deleted since it was checked is an error, not a new history.
    # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE), so a write is all or nothing.
    uri = f"file:{quote(str(path))}?mode={mode}"
    return sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)


def connect(path: Path, timeout: float = LOCK_TIMEOUT_S) -> sqlite3.Connection:
    """The history file at `path` for writing, created or migrated to SCHEMA, dead writers' runs interrupted."""
    db = None
    try:
        if not path.exists():
            _create(path, timeout)
        db = _open(path, timeout, "rw")
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
        raise open_error(path, err, timeout) from None


OPEN = N_("The run history {path} cannot be opened ({text}).")


def open_error(path: Path, err: Exception, timeout: float) -> StoreError:
    """The one sentence for a history that cannot be opened: locked, damaged, or else unusable at that path."""
    text = str(err)
    if "locked" in text or "busy" in text:
        said = _(
            "The run history {path} cannot be opened: another program has held it locked for {timeout:g} s ({text}); "
            "close that program (or end its transaction) and try again."
        )
    elif is_damaged(text):
        said = _(
            "The run history {path} cannot be opened ({text}); python -m core salvage {path} NEW copies every "
            "readable run into a new file."
        )
    else:
        said = _("The run history {path} cannot be opened ({text}); set {env} or --db.")
    return StoreError(said.format(path=path, timeout=timeout, text=text, env=DB_ENV))


def open_reader(path: Path, timeout: float = LOCK_TIMEOUT_S) -> sqlite3.Connection:
    """A second connection that only reads: in WAL mode it never waits behind this process's own writer."""
    try:
        db = _open(path, timeout, "rw")
        db.execute("PRAGMA query_only=ON")
        return db
    except sqlite3.Error as err:
        raise StoreError(_(OPEN).format(path=path, text=err)) from None


def open_read_only(path: Path, timeout: float = LOCK_TIMEOUT_S) -> sqlite3.Connection:
    """A read-only file, opened read-only; one of an older schema is copied into memory and migrated there."""
    db = None
    for mode in ("ro", "ro&immutable=1"):  # immutable: WAL needs a -shm file that a read-only folder cannot hold
        try:
            db = _open(path, timeout, mode)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            break
        except sqlite3.Error as err:
            if db is not None:
                db.close()
            db, failure = None, err
    if db is None:
        said = _("The run history {path} is read-only and cannot be opened ({text}).")
        raise StoreError(said.format(path=path, text=failure))
    try:
        if version < SCHEMA:
            memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            db.backup(memory)
            db.close()
            db = memory
        _migrate(db, path)
        db.execute("PRAGMA query_only=ON")
        return db
    except (sqlite3.Error, StoreError) as err:
        db.close()
        if isinstance(err, StoreError):
            raise
        raise StoreError(_(OPEN).format(path=path, text=err)) from None


def _create(path: Path, timeout: float) -> None:
    """A new, empty history built aside and linked into place, so no one ever sees it half made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.new")
    try:
        db = sqlite3.connect(aside, timeout=timeout, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            _migrate(db, path)
        finally:
            db.close()
        try:
            os.link(aside, path)
        except FileExistsError:
            pass  # another process made it first: theirs is the history
        except OSError:  # a filesystem without hard links
            if not path.exists():
                os.replace(aside, path)
    finally:
        for leftover in (aside, Path(f"{aside}-wal"), Path(f"{aside}-shm")):
            leftover.unlink(missing_ok=True)


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA:
        said = _(
            "The run history {path} was written by a newer version of this app (schema {version}; "
            "this one reads up to {schema}); update the app or use another --db."
        )
        raise StoreError(said.format(path=path, version=version, schema=SCHEMA))
    if version == SCHEMA:
        return
    db.execute("BEGIN IMMEDIATE")
    with db:  # commits, or rolls back on any exception
        version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for steps in MIGRATIONS[version:]:
            for step in steps:
                step(db) if callable(step) else db.execute(step)
        db.execute(f"PRAGMA user_version = {SCHEMA}")


# Runs this process has begun and not yet ended in the file: only these of its own rows may say `running`.
LIVE: set[str] = set()


def stranded(db: sqlite3.Connection) -> list[tuple[str, int | None]]:
    """(run_id, pid) of rows saying `running` on this host with no live job: their process died, or it is this
    process and the run is not one it is recording."""
    rows = db.execute(
        "SELECT run_id, owner_pid, owner_token FROM runs WHERE status = 'running' AND owner_host = ?",
        (socket.gethostname(),),
    ).fetchall()
    return [
        (run_id, pid)
        for run_id, pid, token in rows
        if pid is None or (run_id not in LIVE if pid == os.getpid() else not process_alive(pid, token))
    ]


def _recover(db: sqlite3.Connection, gone: list[tuple[str, int | None]] | None = None) -> None:
    """Mark runs with no live job on this host `interrupted` (see stranded()); their finished epochs stay."""
    here = socket.gethostname()
    gone = stranded(db) if gone is None else gone
    if not gone:
        return
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return  # another process holds the write lock: opening must still work, and the next open recovers
    with db:
        for run_id, pid in gone:
            db.execute(
                "UPDATE runs SET status = 'interrupted', error = ?, owner_host = NULL, owner_pid = NULL,"
                " owner_token = NULL WHERE run_id = ? AND status = 'running'",
                (_ended_sentence(pid, here), run_id),
            )


def recover_now(db: sqlite3.Connection, gone: list[tuple[str, int | None]]) -> None:
    """_recover() for a listing: the stranded() rows `gone` ended now; another's lock is waited for 0.2 s only."""
    (waited,) = db.execute("PRAGMA busy_timeout").fetchone()
    db.execute("PRAGMA busy_timeout = 200")
    try:
        _recover(db, gone)
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(waited)}")


def _ended_sentence(pid: int | None, here: str) -> str:
    if pid == os.getpid():
        return f"Its job in this process (pid {pid} on {here}) ended without its final state being recorded."
    return f"The process that ran it (pid {pid} on {here}) ended before the run finished."


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
