"""python -m core export --tensorboard DIR [RUN_ID ...]: recorded runs as a TensorBoard log directory
(core.export.tensorboard)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from core.cli.common import EXIT_OK, EXIT_USAGE, existing_store, fail
from core.history import archive
from core.history.limits import MAX_CELL, printable
from core.history.store import StoreError
from core.language.i18n import _


def export_tensorboard(args: argparse.Namespace) -> int:
    """Write the runs named (every recorded run where none is) into DIR; say where and how to open it."""
    if args.all or args.csv or args.out:
        return fail("--tensorboard DIR takes RUN_IDs (none: every run), not --all, --csv or --out.", EXIT_USAGE)
    if os.path.exists(args.tensorboard) and not os.path.isdir(args.tensorboard):
        return fail(
            f"--tensorboard {args.tensorboard} is a file; name a folder (it is created if need be).", EXIT_USAGE
        )
    from core.export import tensorboard

    try:
        store = existing_store(args)
        kinds = dict(store.ids()) if store else {}
        ids = args.run_id or [i for i, kind in kinds.items() if kind == "train"]
        if missing := [i for i in ids if kinds.get(i) != "train"]:
            said = printable(missing[0], MAX_CELL)
            what = "a sweep" if kinds.get(missing[0]) else "not in the history (python -m core history lists the runs)"
            return fail(f"RUN_ID {said!r} is {what}; --tensorboard exports training runs.", EXIT_USAGE)
        if not ids:
            return fail("There are no runs in the history to export yet.")
        runs = store.load(ids)
        traces = {i: found for i in ids if (found := store.trace(i))}
        folders = tensorboard.write_logdir(args.tensorboard, runs, traces)
    except StoreError as err:
        return fail(str(err))
    runs_said = f"{len(folders)} run{'s' if len(folders) != 1 else ''} ({len(traces)} with a profile trace)"
    print(f"Wrote {runs_said} to {args.tensorboard}. Open it with: tensorboard --logdir {args.tensorboard}")
    return EXIT_OK


ROOT = Path(__file__).resolve().parents[2]
WRITE_SECONDS = 120  # TensorFlow's import is most of it (4 s here); a history of many long runs takes longer
_one_at_a_time = threading.Lock()


def logdir_zip(db: str | Path, run_ids: list[str]) -> bytes:
    """The runs as a TensorBoard log directory in a .zip, written by this command in a process of its own (the page
    never imports TensorFlow); StoreError with the command's sentence where it fails, or while another is written."""
    if not _one_at_a_time.acquire(blocking=False):
        raise StoreError(_("Another TensorBoard log is being written; try again in a moment."))
    try:
        with tempfile.TemporaryDirectory(prefix="tfdash-tensorboard-") as tmp:
            logs = Path(tmp) / "tensorboard-logs"
            command = [sys.executable, "-m", "core", "export", "--tensorboard", str(logs), *run_ids, "--db", str(db)]
            try:
                done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=WRITE_SECONDS)
            except subprocess.TimeoutExpired:
                said = _("Writing the TensorBoard log took over {seconds} s; it was stopped.")
                raise StoreError(said.format(seconds=WRITE_SECONDS)) from None
            if done.returncode != 0:
                said = [line for line in done.stderr.splitlines() if line.startswith("error:")]
                raise StoreError(said[-1].removeprefix("error:").strip() if said else _("The TensorBoard log failed."))
            return archive.zip_folder(logs)
    finally:
        _one_at_a_time.release()
