"""python -m core history | export | import: the run history on the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys

from core.cli.common import EXIT_OK, Command, db_flag, fail
from core.history.importer import RunFileError
from core.history.store import Store, StoreError, default_db_path


def _existing_store(args: argparse.Namespace) -> Store | None:
    """The history named by --db, or None where there is no such file yet (reading creates nothing)."""
    path = args.db or default_db_path()
    return Store(path) if os.path.exists(path) else None


def _table(head: str, rows: list[tuple[str, ...]]) -> str:
    """An aligned text table: the header's columns are separated by '|'."""
    table = [tuple(head.split("|")), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table)


def _when(iso: str | None) -> str:
    return (iso or "?")[:16].replace("T", " ")


def format_history(rows) -> str:
    """The history as an aligned text table, newest first."""
    cells = [
        (
            r.run_id,
            _when(r.when),
            r.dataset or "?",
            r.model or "?",
            f"{r.device} ({r.variables_on})" if r.variables_on else str(r.device),
            f"{r.epochs_done}/{r.epochs_total}",
            str(r.batch_size),
            "-" if r.final_test_accuracy is None else f"{r.final_test_accuracy:.4f}",
            "-" if r.median_epoch_seconds is None else f"{r.median_epoch_seconds:.3f}",
            r.status,
            r.host or "?",
        )
        for r in rows
    ]
    return _table("RUN|WHEN (UTC)|DATASET|MODEL|DEVICE|EPOCHS|BATCH|TEST ACC|MEDIAN S|STATUS|HOST", cells)


def format_sweeps(rows) -> str:
    """The stored sweeps as an aligned text table, newest first; failed ones say why instead of a crossover."""
    cells = [
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
        )
        for r in rows
    ]
    return _table("SWEEP|WHEN (UTC)|MODEL|DEVICES|BATCH SIZES|POINTS|STATUS|HOST|CROSSOVER", cells)


def cmd_history(args: argparse.Namespace) -> int:
    """List recorded runs, then sweeps, newest first."""
    try:
        store = _existing_store(args)
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
    """Print one run or sweep as JSON (the train/sweep --json format), or its epochs or points as CSV."""
    try:
        store = _existing_store(args)
        text = (store.export_csv if args.csv else store.export_json)(args.run_id) if store else None
    except StoreError as err:
        return fail(str(err))
    except KeyError:
        text = None
    if text is None:
        return fail(f"there is no run {args.run_id!r} in the history (python -m core history lists them).")
    sys.stdout.write(text if args.csv else text + "\n")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """Add a run or sweep file (from train/sweep --json or export, e.g. a GPU server's) to the history."""
    try:
        outcome = Store(args.db).import_result_file(args.file)
    except RunFileError as err:
        return fail(f"{args.file}: {err}")
    except StoreError as err:
        return fail(str(err))
    print(outcome.describe())
    return EXIT_OK


def _history_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    db_flag(p)


def _export_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--csv", action="store_true", help="a run's epochs or a sweep's points as CSV instead of JSON")
    db_flag(p)


def _import_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a run's or a sweep's JSON file (at most 5 MB)")
    db_flag(p)


HISTORY = Command("list recorded runs and sweeps, newest first", _history_flags, cmd_history)
EXPORT = Command("print a recorded run or sweep as JSON, or its epochs or points as CSV", _export_flags, cmd_export)
IMPORT = Command("add a run's or sweep's JSON file (e.g. from a GPU server) to the history", _import_flags, cmd_import)
