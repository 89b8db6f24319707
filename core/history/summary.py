"""A training run's summary kept in its runs row (epochs done, final test accuracy, steady epoch seconds).

The history's list views read these columns and never the epochs, so listing 2,000 runs of 1,000 epochs costs
the same as listing 2,000 runs of one. Each value is computed as a loaded run's is (RunResult, core.analysis.compare's
steady epoch), so a list shows exactly what the page and `python -m core train` say of that run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import fields

from core.results import EpochMetrics, RunResult, mean_epoch, steady_epoch_seconds
from core.results.states import State

_EPOCH_FIELDS = {f.name for f in fields(EpochMetrics)}
_SET = "UPDATE runs SET epochs_done = ?, final_test_accuracy = ?, steady_epoch_seconds = ? WHERE run_id = ?"


def epoch_from_json(metrics: str) -> EpochMetrics:
    """An EpochMetrics from its stored JSON; fields a newer version added are left out."""
    values = json.loads(metrics)
    return EpochMetrics(**{k: v for k, v in values.items() if k in _EPOCH_FIELDS})


def summarise(epochs: list[EpochMetrics]) -> tuple[int, float | None, float | None]:
    """(epochs done, final test accuracy, steady epoch seconds) as a loaded run's are computed."""
    result = RunResult(config={}, host={}, device={}, status=State.COMPLETED, epochs=epochs)
    return len(epochs), result.final_test_accuracy(), steady_epoch_seconds(result)


def _stored(db: sqlite3.Connection, run_id: str | None) -> list[EpochMetrics]:
    """The run's stored epochs, in order."""
    rows = db.execute("SELECT metrics FROM epochs WHERE run_id = ? ORDER BY epoch", (run_id,)).fetchall()
    return [epoch_from_json(m) for (m,) in rows]


def refresh(db: sqlite3.Connection, run_ids: Iterable[str | None]) -> None:
    """Recompute the summary of each run from its stored epochs, inside the caller's transaction."""
    for run_id in dict.fromkeys(run_ids):
        write(db, run_id, _stored(db, run_id))


def write(db: sqlite3.Connection, run_id: str | None, epochs: list[EpochMetrics]) -> None:
    """Store the summary of `epochs`, which are exactly the run's stored epochs (the caller's transaction)."""
    db.execute(_SET, (*summarise(epochs), run_id))


class Running:
    """A recording run's summary, kept as its epochs arrive in order: a new epoch costs the same at epoch 1,000 as at
    epoch 10. Re-reading every stored epoch at each new one made a write 60 ms at epoch 1,000 against 1 ms at epoch 1
    (bench/history_scale.py, add_epoch_1000_vs_10)."""

    def __init__(self) -> None:
        self.done, self.last_accuracy, self.steady = 0, None, []  # steady: epochs 2..N's seconds, in order

    def add(self, metrics: EpochMetrics) -> None:
        """Count the next epoch in."""
        self.done, self.last_accuracy = metrics.epoch, metrics.test_accuracy
        if not metrics.warmup:
            self.steady.append(metrics.train_seconds)

    def values(self) -> tuple[int, float | None, float | None]:
        """(epochs done, final test accuracy, steady epoch seconds), as summarise() computes them."""
        # A sum over the epochs' seconds: microseconds at epoch 1,000, and exactly summarise()'s arithmetic.
        return self.done, self.last_accuracy, mean_epoch(self.steady)


def after_epoch(db: sqlite3.Connection, run_id: str, metrics: EpochMetrics, running: Running) -> None:
    """The summary once `metrics` is stored (the caller's transaction): `running` counts it in when it is the next
    epoch; any other order (a retried epoch, a gap) reads the stored epochs back and starts `running` afresh."""
    if metrics.epoch == running.done + 1:
        running.add(metrics)
    else:
        running.__init__()
        for m in _stored(db, run_id):
            running.add(m)
    db.execute(_SET, (*running.values(), run_id))


def backfill(db: sqlite3.Connection) -> None:
    """Migrations 2 and 3: the summary of every training run already stored (3: the steady epoch is the mean)."""
    refresh(db, [run_id for (run_id,) in db.execute("SELECT run_id FROM runs WHERE kind = 'train'").fetchall()])
