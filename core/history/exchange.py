"""A Store's files in and out: a result file imported (checked, then added or matched), a run exported as JSON or
CSV."""

from __future__ import annotations

import os

from core.history import importer, tables
from core.history.importer import ImportOutcome, RunFileError
from core.history.paths import StoreError
from core.history.rows import result_csv
from core.language.i18n import _
from core.results import RunResult, SweepResult


class FileExchange:
    """What core.history.store.Store does with files (it provides _tx, get and get_sweep)."""

    def import_file(self, source: bytes | str | os.PathLike) -> ImportOutcome:
        """Add a training run or a sweep from a JSON file (its bytes, or its path) written by train --json, sweep --json
        or export; raises RunFileError (the store unchanged) for a bad file."""
        is_bytes = isinstance(source, (bytes, bytearray))
        result = importer.parse_result_file(source) if is_bytes else importer.read_result_file(source)
        if result.run_id is None:  # an id-less file: its content names it, so a second import matches
            result.run_id = importer.content_id(result)
        with self._tx() as db:  # check and insert in one transaction, so two importers cannot both add it
            row = db.execute("SELECT 1 FROM runs WHERE run_id = ?", (result.run_id,)).fetchone()
            if row is None:
                tables.write(db, result, "imported")
                return ImportOutcome(result.run_id, True, result)
        try:
            existing = self.get(result.run_id) or self.get_sweep(result.run_id)
        except StoreError:  # a stored sweep that cannot be read is never the same as a good file
            existing = None
        if existing is not None and existing.to_dict() == result.to_dict():
            return ImportOutcome(result.run_id, False, existing)
        if importer.completes(existing, result) and self._replace(existing, result):
            return ImportOutcome(result.run_id, True, result, replaced=existing)
        different = importer.FILE_KINDS[getattr(result, "kind", "train")].different
        raise RunFileError(_(different).format(run_id=result.run_id))

    def _replace(self, partial: RunResult, result: RunResult) -> bool:
        """Write `result` over the stored `partial` run, if the row is still as it was read; whether it was."""
        with self._tx() as db:
            row = db.execute("SELECT status, epochs_done FROM runs WHERE run_id = ?", (partial.run_id,)).fetchone()
            if row != (partial.status, len(partial.epochs)):
                return False
            tables.write_run(db, result, "local")  # the row keeps its origin: it is still the run that began here
        return True

    def export_json(self, run_id: str) -> str:
        """A run or a sweep as the file `train --json` or `sweep --json` writes (raises KeyError if unknown)."""
        return self._must_get(run_id).to_json()

    def export_csv(self, run_id: str) -> str:
        """A run's epochs or a sweep's points as CSV (raises KeyError if unknown)."""
        return result_csv(self._must_get(run_id))

    def _must_get(self, run_id: str) -> RunResult | SweepResult:
        result = self.get(run_id) or self.get_sweep(run_id)
        if result is None:
            raise KeyError(run_id)
        return result
