"""What every subcommand shares: exit codes, the one-sentence error, --db, Ctrl-C, and the save-and-report tail."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.history.limits import without_controls
from core.history.paths import check_path
from core.history.recorder import Recorder
from core.history.store import Store, StoreError, default_db_path
from core.results.states import State

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, the flags it takes and the function that runs it (returns the exit code)."""

    help: str
    add_flags: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag prints one sentence (no usage block) and exits with 2."""

    def error(self, message: str):  # noqa: D102 - argparse hook
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help).\n")


def fail(message: str, code: int = EXIT_FAILED) -> int:
    """Print one sentence to stderr and return the exit code; a file name's escape sequences never reach the
    terminal."""
    print(f"error: {without_controls(message)}", file=sys.stderr)
    return code


def db_flag(p: argparse.ArgumentParser) -> None:
    """--db FILE: the history file every command that reads or records runs takes."""
    p.add_argument("--db", metavar="FILE", help="run history file (default $TFDASH_DB, else ~/.local/share/tfdash)")


def existing_store(args: argparse.Namespace) -> Store | None:
    """The history named by --db, or None where there is no such file yet (reading creates nothing)."""
    path = default_db_path() if args.db is None else check_path(args.db)
    return Store(path) if os.path.exists(path) else None


def stop_on_ctrl_c() -> Callable[[], bool]:
    """Ctrl-C asks the job to stop after the current step; what it finished is kept."""
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    return stop.is_set


def check_json(path: str | None) -> int | None:
    """--json FILE checked before any work: its folder exists and may be written; an exit code (2) if not."""
    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return fail(f"--json: {path} is a directory; name a file to write the result to.", EXIT_USAGE)
    if not os.path.isdir(folder):
        return fail(f"--json: cannot write {path} (no folder {folder}).", EXIT_USAGE)
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        return fail(f"--json: cannot write {path} (permission denied).", EXIT_USAGE)
    return None


def write_json(path: str | None, result: Any) -> int | None:
    """Write result.to_json() to --json FILE; an exit code if that failed, else None."""
    if not path:
        return None
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(result.to_json())
    except OSError as err:
        return fail(f"--json: cannot write {path} ({err.strerror}).")
    return None


def save_and_report(
    recorder: Recorder,
    result: Any,
    json_path: str | None,
    summary: Callable[[Any], str],
    failed: str,
) -> int:
    """The end of a train or sweep: store the result, write --json, then the summary or the failure; the exit code.

    A result the history cannot take is still written to --json (and `import` of that file then replaces the
    partial run), the run is marked failed where the file allows, and the sentence says which epochs it holds.
    """
    unsaved = recorder.finish(result)
    json_code = write_json(json_path, result)
    if unsaved is not None:
        with contextlib.suppress(StoreError):  # the file that refused the result may refuse this too
            recorder.store.mark(result.run_id, State.FAILED, str(unsaved))
        whole = ""
        if json_path and json_code is None:
            whole = f" The whole result is in {json_path}: python -m core import {json_path} replaces the partial run."
        return fail(f"{unsaved}{recorder.kept()}{whole}")
    if json_code is not None:
        return json_code
    if result.status in (State.FAILED, State.INTERRUPTED):  # interrupted: a Ray node lost mid-run, its epochs kept
        return fail(result.error or failed)  # the job's own sentence, else `failed`
    print(summary(result))
    return EXIT_CANCELLED if result.status == State.CANCELLED else EXIT_OK
