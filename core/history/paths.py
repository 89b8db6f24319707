"""Where the history file is and what it may be, and the one sentence for each way it can fail.

$TFDASH_DB or --db names the file; an empty name, a directory, a device, a FIFO and a 0-byte file are each
refused in one sentence (a 0-byte file is never one this app made: core.history.database builds a new file
aside and links it into place whole). A lock is waited for LOCK_TIMEOUT_S seconds ($TFDASH_LOCK_TIMEOUT),
a bound every sentence about a lock states.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DB_ENV = "TFDASH_DB"
LOCK_ENV = "TFDASH_LOCK_TIMEOUT"
LOCK_TIMEOUT_S = 5.0
APP_DIR = "tfdash"
DB_FILE = "runs.sqlite3"
DAMAGED_WORDS = ("malformed", "corrupt", "not a database")  # SQLite's words for a damaged file


class StoreError(RuntimeError):
    """The history file cannot be opened, read or written; the sentence names the file."""


def default_db_path() -> Path:
    """$TFDASH_DB, else $XDG_DATA_HOME/tfdash/runs.sqlite3, else ~/.local/share/tfdash/runs.sqlite3."""
    if DB_ENV in os.environ:
        return check_path(os.environ[DB_ENV], f"{DB_ENV}=")
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data_home) / APP_DIR / DB_FILE


def check_path(path: str | os.PathLike, named: str = "--db ") -> Path:
    """The history path, refused in one sentence if empty, not a plain file, or a 0-byte file."""
    text = os.fspath(path)
    if not str(text).strip():
        raise StoreError(
            f'The history file name is empty ({named}""); name a file, or leave --db and {DB_ENV} unset for the default.'
        )
    p = Path(text).expanduser()
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return p
    except OSError as err:
        raise StoreError(f"The run history {p} cannot be opened ({err.strerror or err}).") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"The run history {p} is a directory; name a file in it, e.g. {p / DB_FILE}.")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"The run history {p} is not a regular file (a device, FIFO or socket); name a plain file.")
    if st.st_size == 0:
        raise StoreError(
            f"The run history {p} is an empty (0-byte) file, not a history: perhaps a copy or a write cut short; "
            "delete it to start a new history there."
        )
    return p


def lock_timeout() -> float:
    """Seconds a write waits for another process's lock: $TFDASH_LOCK_TIMEOUT, else LOCK_TIMEOUT_S."""
    raw = os.environ.get(LOCK_ENV)
    if raw is None:
        return LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 600:
        raise StoreError(f"{LOCK_ENV} must be a number of seconds from 0 to 600, not {raw!r}.")
    return value


def write_error(path: Path, err: Exception, timeout: float) -> StoreError:
    """The one sentence for a write that failed: the file, and why (a held lock states how long it waited)."""
    text = str(err)
    if "locked" in text or "busy" in text:
        return StoreError(
            f"The run history {path} cannot be written: it stayed locked by another process for {timeout:g} s ({text})."
        )
    if "readonly" in text.replace("-", "").replace(" ", ""):
        return read_only_error(path)
    return StoreError(f"The run history {path} cannot be written ({text}).")


def read_only_error(path: Path) -> StoreError:
    """The sentence for a write to a history this process can only read."""
    return StoreError(f"The run history {path} is read-only; it can be listed and exported, not changed.")


def salvage_advice(path: Path, text: str) -> str:
    """'; python -m core salvage PATH NEW copies every readable run into a new file' where SQLite says it is damaged."""
    damaged = any(word in text for word in DAMAGED_WORDS)
    return f"; python -m core salvage {path} NEW copies every readable run into a new file" if damaged else ""


def read_error(path: Path, err: Exception) -> StoreError:
    """The one sentence for a read that failed; a damaged file says how to save the rest."""
    text = str(err)
    return StoreError(f"The run history {path} cannot be read ({text}){salvage_advice(path, text)}.")


def is_read_only(path: Path) -> bool:
    """Whether an existing file, or its folder, is marked read-only (mode bits too: root ignores access(2))."""

    def writable(p: Path) -> bool:
        try:
            return os.access(p, os.W_OK) and bool(os.stat(p).st_mode & 0o222)
        except OSError:
            return False

    return path.exists() and not (writable(path) and writable(path.parent))
