"""What only the tests ask of a Store: a raw record of any kind, the records of a kind, SQLite's own checks."""

from __future__ import annotations

import json
from typing import Any

from core.history import tables
from core.history.database import new_run_id
from core.history.store import Store


def save_record(store: Store, kind: str, payload: dict[str, Any], run_id: str | None = None) -> str:
    """Store `payload` as-is under `kind` (no result object, no check): ValueError if the id is another kind's."""
    run_id = run_id or new_run_id()
    with store._tx() as db:
        changed = tables.write_record(db, kind, payload, run_id, "completed")
    if not changed:
        raise ValueError(f"id {run_id} is already used by a result of another kind.")
    return run_id


def records(store: Store, kind: str) -> list[tuple[str, dict[str, Any]]]:
    """(id, payload) for every stored result of `kind`, newest first."""
    rows = store._query("SELECT run_id, payload FROM runs WHERE kind = ? ORDER BY stored_at DESC", (kind,))
    return [(run_id, json.loads(payload or "{}")) for run_id, payload in rows]


def integrity_check(store: Store) -> str:
    """SQLite's PRAGMA integrity_check: 'ok' for a sound file."""
    return "; ".join(row[0] for row in store._query("PRAGMA integrity_check"))


def checkpoint(store: Store) -> None:
    """Fold the write-ahead log into the main file (so the file alone holds everything)."""
    store._query("PRAGMA wal_checkpoint(TRUNCATE)")
