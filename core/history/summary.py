"""A training run's summary kept in its runs row (epochs done, final test accuracy, median steady epoch seconds).

The history's list views read these columns and never the epochs, so listing 2,000 runs of 1,000 epochs costs
the same as listing 2,000 runs of one. Each value is computed by RunResult's own methods, so a list shows
exactly what a loaded run would.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import fields

from core.results import EpochMetrics, RunResult

COLUMNS = ("epochs_done", "final_test_accuracy", "median_epoch_seconds")
_EPOCH_FIELDS = {f.name for f in fields(EpochMetrics)}


def epoch_from_json(metrics: str) -> EpochMetrics:
    """An EpochMetrics from its stored JSON; fields a newer version added are left out."""
    values = json.loads(metrics)
    return EpochMetrics(**{k: v for k, v in values.items() if k in _EPOCH_FIELDS})


def summarise(epochs: list[EpochMetrics]) -> tuple[int, float | None, float | None]:
    """(epochs done, final test accuracy, median steady-state epoch seconds) as RunResult computes them."""
    result = RunResult(config={}, host={}, device={}, status="completed", epochs=epochs)
    return len(epochs), result.final_test_accuracy(), result.median_epoch_seconds()


def refresh(db: sqlite3.Connection, run_ids: Iterable[str | None]) -> None:
    """Recompute the summary of each run from its stored epochs, inside the caller's transaction."""
    for run_id in dict.fromkeys(run_ids):
        rows = db.execute("SELECT metrics FROM epochs WHERE run_id = ? ORDER BY epoch", (run_id,)).fetchall()
        values = summarise([epoch_from_json(m) for (m,) in rows])
        db.execute(
            "UPDATE runs SET epochs_done = ?, final_test_accuracy = ?, median_epoch_seconds = ? WHERE run_id = ?",
            (*values, run_id),
        )


def backfill(db: sqlite3.Connection) -> None:
    """Migration 2: the summary of every training run already stored."""
    refresh(db, [run_id for (run_id,) in db.execute("SELECT run_id FROM runs WHERE kind = 'train'").fetchall()])
