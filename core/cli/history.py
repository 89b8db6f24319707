"""python -m core history | export | import | salvage: the run history on the command line.

Every label another machine wrote (host, device names) is printed through printable(): no escape sequence
reaches the terminal and no column is wider than MAX_CELL characters.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from core.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Command, db_flag, existing_store, fail
from core.history import archive
from core.history.importer import RunFileError
from core.history.limits import MAX_CELL, printable, read_limited, without_controls
from core.history.salvage import salvage
from core.history.store import Store, StoreError
from core.results.states import State

LONG_CELL = 400  # a sweep's last column is a sentence (an error, the crossover)


def _cells(row: tuple, last: int = MAX_CELL) -> tuple[str, ...]:
    """A table row's cells made printable: escapes gone, each cut to MAX_CELL (the last to `last`) characters."""
    return (*(printable(c, MAX_CELL) for c in row[:-1]), printable(row[-1], last))


def _table(head: str, rows: list[tuple[str, ...]]) -> str:
    """An aligned text table: the header's columns are separated by '|'."""
    table = [tuple(head.split("|")), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table)


def _when(iso: str | None) -> str:
    return (iso or "?")[:16].replace("T", " ")


def format_history(rows) -> str:
    """The history as an aligned text table, newest first; STEADY S is core.analysis.compare's steady epoch (the mean of
    epochs 2+), as the page's tables say it."""
    cells = [
        _cells(
            (
                r.run_id,
                _when(r.when),
                r.dataset or "?",
                r.model or "?",
                f"{r.device} ({r.variables_on})" if r.variables_on else str(r.device),
                r.execution or "?",  # the two arms of a comparison differ here, not only by their -1/-2
                f"{r.epochs_done}/{r.epochs_total}",
                str(r.batch_size),
                "-" if r.final_test_accuracy is None else f"{r.final_test_accuracy:.4f}",
                "-" if r.steady_epoch_seconds is None else f"{r.steady_epoch_seconds:.3f}",
                r.status,
                r.host or "?",
            )
        )
        for r in rows
    ]
    return _table("RUN|WHEN (UTC)|DATASET|MODEL|DEVICE|EXECUTION|EPOCHS|BATCH|TEST ACC|STEADY S|STATUS|HOST", cells)


def format_sweeps(rows) -> str:
    """The stored sweeps as an aligned text table, newest first; failed ones say why instead of a crossover."""
    cells = [
        _cells(
            (
                r.run_id,
                _when(r.when),
                f"{r.model or '?'} (hidden {r.hidden_units})" if r.hidden_units else r.model or "?",
                ",".join(r.devices) or "?",
                ",".join(map(str, r.batch_sizes)) or "?",
                f"{r.points_measured}/{r.points_total}",
                r.status,
                r.host or "?",
                r.crossover if r.points_measured else r.error or r.crossover,
            ),
            LONG_CELL,
        )
        for r in rows
    ]
    return _table("SWEEP|WHEN (UTC)|MODEL|DEVICES|BATCH SIZES|POINTS|STATUS|HOST|CROSSOVER", cells)


def cmd_history(args: argparse.Namespace) -> int:
    """List recorded runs, then sweeps, newest first."""
    try:
        store = existing_store(args)
        rows, sweeps = (store.history(), store.sweeps()) if store else ([], [])
    except StoreError as err:
        return fail(str(err))
    if args.json:  # one list; each row says its kind (train or sweep)
        print(json.dumps([{"kind": r.kind, **r.to_dict()} for r in [*rows, *sweeps]], indent=2))
    elif not rows and not sweeps:
        print(f"No runs recorded yet in {store.path if store else args.db or 'the default history'}.")
    else:
        tables = ([format_history(rows)] if rows else []) + ([format_sweeps(sweeps)] if sweeps else [])
        print("\n\n".join(tables))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """Print one run or sweep as JSON (the train/sweep --json format), or its epochs or points as CSV; or write runs
    as a TensorBoard log directory (--tensorboard)."""
    if args.tensorboard:
        from core.cli.tensorboard import export_tensorboard

        return export_tensorboard(args)
    if len(args.run_id) > 1:
        return fail("export prints one RUN_ID (several go with --tensorboard DIR).", EXIT_USAGE)
    args.run_id = args.run_id[0] if args.run_id else None
    if args.all == bool(args.run_id):
        return fail("export takes a RUN_ID or --all, not both or neither.", EXIT_USAGE)
    if args.all:
        return export_all(args)
    if args.out:
        return fail("--out goes with --all; export RUN_ID prints to the screen (redirect it with >).", EXIT_USAGE)
    try:
        store = existing_store(args)
        text = (store.export_csv if args.csv else store.export_json)(args.run_id) if store else None
    except StoreError as err:
        return fail(str(err))
    except KeyError:
        text = None
    if text is None:
        return fail(f"there is no run {args.run_id!r} in the history (python -m core history lists them).")
    sys.stdout.write(text if args.csv else text + "\n")
    return EXIT_OK


def export_all(args: argparse.Namespace) -> int:
    """Every readable run and sweep, one file's JSON per line (each line imports as a file); a sentence of counts."""
    if args.csv:
        return fail("--all exports JSON lines; use export --csv RUN_ID for one run's CSV.", EXIT_USAGE)
    try:
        store = existing_store(args)
        ids = store.ids() if store else []
    except StoreError as err:
        return fail(str(err))
    lines, unreadable = [], []
    for run_id, kind in ids:
        try:
            result = store.get(run_id) if kind == "train" else store.get_sweep(run_id)
            if result is None:
                raise StoreError(f"a {kind} this version cannot export")
            lines.append(result.to_json(indent=None) + "\n")
        except StoreError as err:
            unreadable.append(f"{printable(run_id, MAX_CELL)} ({err})")
    try:
        out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115 - stdout stays open
    except OSError as err:
        return fail(f"--out: cannot write {args.out} ({err.strerror}).")
    with out if args.out else contextlib.nullcontext():
        out.writelines(lines)
    runs = sum(1 for _, kind in ids if kind == "train")
    said = f"Exported {len(lines)} of {len(ids)} results ({runs} runs, {len(ids) - runs} sweeps)"
    print(f"{said}{'; could not read: ' + '; '.join(unreadable) if unreadable else ''}.", file=sys.stderr)
    return EXIT_FAILED if unreadable else EXIT_OK


def cmd_salvage(args: argparse.Namespace) -> int:
    """Copy every readable run and sweep of a damaged history into a new file, then say how many."""
    try:
        print(without_controls(salvage(args.damaged, args.new)))
    except StoreError as err:
        return fail(str(err))
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """Add a run or sweep file (from train/sweep --json or export, e.g. a GPU server's) to the history."""
    if str(args.file).lower().endswith(".zip"):  # as the page tells a .zip: by its name
        return _import_zip(args)
    try:
        outcome = Store(args.db).import_file(args.file)
    except RunFileError as err:
        return fail(f"{args.file}: {err}")
    except StoreError as err:
        return fail(str(err))
    print(outcome.describe())
    return EXIT_OK


def _import_zip(args: argparse.Namespace) -> int:
    """Every run and sweep file in a .zip (History's download of several runs), as the page imports them: the .zip
    at most the page's upload limit, its members within core.history.archive's, one sentence for each member."""
    failed = 0
    try:
        store = Store(args.db)
        for member in archive.zip_members(read_limited(args.file)):  # one member in memory at a time
            try:
                if member.problem:
                    raise RunFileError(member.problem)
                print(store.import_file(member.data).describe())
            except RunFileError as err:
                failed += 1
                fail(f"{args.file}: {member.name}: {err}")
    except (RunFileError, archive.ArchiveError) as err:
        return fail(f"{args.file}: {err}")
    except StoreError as err:
        return fail(str(err))
    return EXIT_FAILED if failed else EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    """Remove a run (and its epochs) or a sweep from the history; a run still recording here is refused."""
    try:
        store = existing_store(args)
        if store is None:
            return fail(f"there is no run {args.run_id!r} in the history (it has no file yet).")
        rows = {r.run_id: r for r in store.history()}  # a running row with no live job is ended by this listing
        row = rows.get(args.run_id)
        if row is not None and row.status == State.RUNNING:
            return fail(f"run {args.run_id} is still running (its process is alive); stop it first.")
        if not store.delete(args.run_id):
            return fail(f"there is no run {args.run_id!r} in the history (python -m core history lists them).")
    except StoreError as err:
        return fail(str(err))
    print(f"Deleted {args.run_id} and its epochs; every other run is kept.")
    return EXIT_OK


def _history_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    db_flag(p)


def _export_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_id", metavar="RUN_ID", nargs="*")
    p.add_argument("--csv", action="store_true", help="a run's epochs or a sweep's points as CSV instead of JSON")
    p.add_argument("--all", action="store_true", help="every readable run and sweep, one JSON file per line")
    p.add_argument("--out", metavar="FILE", help="with --all: write to FILE instead of the screen")
    said = "write the RUN_IDs (none: every run) as a TensorBoard log directory in DIR (tensorboard --logdir DIR)"
    p.add_argument("--tensorboard", metavar="DIR", help=said)
    db_flag(p)


def _import_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a run's or a sweep's JSON file, or a .zip of them (at most 5 MiB)")
    db_flag(p)


DELETE = Command(
    "remove a recorded run or sweep from the history",
    lambda p: (p.add_argument("run_id", metavar="RUN_ID"), db_flag(p)),
    cmd_delete,
)
HISTORY = Command("list recorded runs and sweeps, newest first", _history_flags, cmd_history)
EXPORT = Command("print a recorded run or sweep as JSON, or its epochs or points as CSV", _export_flags, cmd_export)
SALVAGE = Command(
    "copy every readable run and sweep of a damaged history into a new file",
    lambda p: (p.add_argument("damaged", metavar="DAMAGED"), p.add_argument("new", metavar="NEW")),
    cmd_salvage,
)
IMPORT = Command(
    "add a run's or sweep's JSON file (e.g. from a GPU server), or History's .zip of them, to the history",
    _import_flags,
    cmd_import,
)
