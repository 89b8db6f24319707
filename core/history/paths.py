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

from core.language.i18n import N_, _

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
        said = _(
            'The history file name is empty ({named}""); name a file, or leave --db and {env} unset for the default.'
        )
        raise StoreError(said.format(named=named, env=DB_ENV))
    p = Path(text).expanduser()
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return p
    except OSError as err:
        raise StoreError(
            _("The run history {path} cannot be opened ({text}).").format(path=p, text=err.strerror or err)
        ) from None
    if stat.S_ISDIR(st.st_mode):
        said = _("The run history {path} is a directory; name a file in it, e.g. {example}.")
        raise StoreError(said.format(path=p, example=p / DB_FILE))
    if not stat.S_ISREG(st.st_mode):
        said = _("The run history {path} is not a regular file (a device, FIFO or socket); name a plain file.")
        raise StoreError(said.format(path=p))
    if st.st_size == 0:
        said = _(
            "The run history {path} is an empty (0-byte) file, not a history: perhaps a copy or a write cut short; "
            "delete it to start a new history there."
        )
        raise StoreError(said.format(path=p))
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
        raise StoreError(
            _("{env} must be a number of seconds from 0 to 600, not {raw!r}.").format(env=LOCK_ENV, raw=raw)
        )
    return value


# The sentences of a refused write: said by whichever thread wrote (a runner's listener speaks English), read back
# into a page's language where a page shows them (core.history.recorder.SAID, core.language.i18n.again).
WRITE_LOCKED = N_(
    "The run history {path} cannot be written: it stayed locked by another process for {timeout:g} s ({text})."
)
WRITE = N_("The run history {path} cannot be written ({text}).")
READ_ONLY = N_("The run history {path} is read-only; it can be listed and exported, not changed.")
# SQLite's own words for a refused write, said in parentheses: a page reads them in its language too.
SQLITE_WORDS = (
    N_("database is locked"),
    N_("database table is locked"),
    N_("database or disk is full"),
    N_("disk I/O error"),
    N_("attempt to write a readonly database"),
)


def write_error(path: Path, err: Exception, timeout: float) -> StoreError:
    """The one sentence for a write that failed: the file, and why (a held lock states how long it waited)."""
    text = str(err)
    if "locked" in text or "busy" in text:
        return StoreError(_(WRITE_LOCKED).format(path=path, timeout=timeout, text=text))
    if "readonly" in text.replace("-", "").replace(" ", ""):
        return read_only_error(path)
    return StoreError(_(WRITE).format(path=path, text=text))


def read_only_error(path: Path) -> StoreError:
    """The sentence for a write to a history this process can only read."""
    return StoreError(_(READ_ONLY).format(path=path))


def is_damaged(text: str) -> bool:
    """Whether SQLite's words for a failure say the file is damaged (python -m core salvage may save the rest)."""
    return any(word in text for word in DAMAGED_WORDS)


READ = N_("The run history {path} cannot be read ({text}).")
READ_DAMAGED = N_(
    "The run history {path} cannot be read ({text}); python -m core salvage {path} NEW copies every readable run "
    "into a new file."
)


def read_error(path: Path, err: Exception) -> StoreError:
    """The one sentence for a read that failed; a damaged file says how to save the rest."""
    text = str(err)
    return StoreError(_(READ_DAMAGED if is_damaged(text) else READ).format(path=path, text=text))


def is_read_only(path: Path) -> bool:
    """Whether an existing file, or its folder, is marked read-only (mode bits too: root ignores access(2))."""

    def writable(p: Path) -> bool:
        try:
            return os.access(p, os.W_OK) and bool(os.stat(p).st_mode & 0o222)
        except OSError:
            return False

    return path.exists() and not (writable(path) and writable(path.parent))
