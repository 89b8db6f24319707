"""Sweeps in the run history: listed, read, imported and exported.

A sweep is stored whole, as its file's JSON (SweepResult.to_dict()), in a runs row of kind "sweep";
core.history.store.Store inherits these methods, so the dashboard calls store.sweeps(), store.get_sweep(id).
"""

from __future__ import annotations

import json

from core.config import ConfigError
from core.history.importer import ImportOutcome, RunFileError, content_id
from core.history.rows import SweepRow, sweep_row
from core.sweep_results import SWEEP_KIND, SweepFileError, SweepResult


class SweepHistory:
    """The Store's methods for sweeps; they use its _query, _tx and _write_record."""

    def sweeps(self, limit: int | None = None) -> list[SweepRow]:
        """Stored sweeps, newest first: the dashboard's list of sweeps and `python -m core history`."""
        rows = self._query(
            "SELECT run_id, payload, origin, status, started_at FROM runs WHERE kind = ?"
            " ORDER BY COALESCE(started_at, stored_at) DESC LIMIT ?",
            (SWEEP_KIND, -1 if limit is None else limit),
        )
        listed = []
        for run_id, payload, origin, status, started_at in rows:
            try:
                listed.append(sweep_row(_sweep(run_id, payload), origin))
            except SweepFileError as err:  # listed with the reason, so nothing stored is hidden
                unreadable = f"The stored sweep cannot be read: {err}"
                listed.append(
                    SweepRow(run_id, started_at, None, None, (), (), 0, 0, status, None, "", unreadable, origin)
                )
        return listed

    def get_sweep(self, run_id: str) -> SweepResult | None:
        """One sweep as a SweepResult, or None if there is no sweep with that id."""
        rows = self._query("SELECT payload FROM runs WHERE kind = ? AND run_id = ?", (SWEEP_KIND, run_id))
        if not rows:
            return None
        try:
            return _sweep(run_id, rows[0][0])
        except SweepFileError as err:
            from core.history.store import StoreError  # core.history.store imports this module, so not at load

            raise StoreError(f"The run history {self.path} holds sweep {run_id}, which it cannot read: {err}") from None

    def _add_imported_sweep(self, result: SweepResult) -> ImportOutcome:
        if result.run_id is None:  # an id-less file: its content names it, so a second import matches
            result.run_id = content_id(result)
        payload = result.to_dict()
        with self._tx() as db:  # check and insert in one transaction, so two importers cannot both add it
            row = db.execute("SELECT kind, payload FROM runs WHERE run_id = ?", (result.run_id,)).fetchone()
            if row is None:
                self._write_record(db, SWEEP_KIND, payload, result.run_id, result.status, origin="imported")
                return ImportOutcome(result.run_id, True, result)
        try:
            existing = _sweep(result.run_id, row[1]) if row[0] == SWEEP_KIND else None
        except SweepFileError:
            existing = None
        if existing is None or existing.to_dict() != payload:
            raise RunFileError(
                f"A different result with id {result.run_id} is already in the history; delete it there to replace it."
            )
        return ImportOutcome(result.run_id, False, existing)


def _sweep(run_id: str, payload: str | None) -> SweepResult:
    """A stored sweep, checked as any sweep file is (SweepFileError says what is wrong with it)."""
    try:
        data = json.loads(payload or "null")
    except ValueError:
        raise SweepFileError(f"Sweep {run_id} is not stored as JSON.") from None
    try:
        return SweepResult.from_dict(data)
    except ConfigError as err:
        raise SweepFileError(f"config: {err}") from None
