"""How results map to rows of the history file: a training run to a runs row and its epochs rows, anything else
(a sweep) to a runs row holding its file's JSON. Each function works inside the caller's transaction.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from typing import Any

from core.history import summary
from core.history.checks import check_result
from core.history.limits import RunFileError
from core.history.paths import StoreError
from core.history.rows import HistoryRow, execution_name
from core.language.i18n import _
from core.results import SWEEP_KIND, EpochMetrics, RunResult, SweepResult, utc_now
from core.results.measurements import Measurements

RUN_COLUMNS = "run_id, status, schema_version, config, host, device, error, started_at, finished_at, origin, measured"
# A training run's list row: its summary columns and the few labels the list shows, never an epoch.
SUMMARY_COLUMNS = (
    "run_id, started_at, json_extract(config, '$.dataset'), json_extract(config, '$.model'),"
    " json_extract(device, '$.requested'), json_extract(config, '$.device'), json_extract(device, '$.variables_on'),"
    " json_extract(device, '$.name'), json_extract(config, '$.execution'), epochs_done,"
    " json_extract(config, '$.epochs'),"
    " json_extract(config, '$.batch_size'), final_test_accuracy, steady_epoch_seconds, status,"
    " json_extract(host, '$.hostname'), origin"
)
_RECORD_TEXT = ("started_at", "finished_at", "error")  # a record's payload fields copied to their columns


def to_json(value: Any) -> str:
    """A value as stored: strict JSON (no NaN or infinity), or StoreError saying why not."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError as err:  # NaN or infinity: JSON (and the file format) has no such number
        raise StoreError(_("A run cannot be stored: {problem}.").format(problem=err)) from None


def insert_running(
    db: sqlite3.Connection, run_id: str, config: dict, pid: int, token: str, started_at: str | None
) -> None:
    """The row of a run starting now, owned by process `pid` on this host (token: core.history.database)."""
    db.execute(
        "INSERT INTO runs (run_id, status, schema_version, config, device, started_at, stored_at,"
        " owner_host, owner_pid, owner_token) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            RunResult.schema_version,
            json.dumps(config),
            json.dumps({"requested": config.get("device")}),
            started_at or utc_now(),
            utc_now(),
            socket.gethostname(),
            pid,
            token,
        ),
    )


def write(
    db: sqlite3.Connection, result: Any, origin: str, run_id: str | None = None, status: str | None = None
) -> None:
    """Insert or replace a training run (with its epochs), or a sweep or any other kind's result (run_id and status:
    where it does not carry them); StoreError if its id is another kind's."""
    if isinstance(result, RunResult):
        write_run(db, result, origin)
        return
    run_id, status = run_id or result.run_id, status or result.status
    if not write_record(db, result.kind, result.to_dict(), run_id, status, origin):
        raise StoreError(_("The id {run_id} is already used by a result of another kind.").format(run_id=run_id))


def write_run(db: sqlite3.Connection, result: RunResult, origin: str) -> None:
    """Insert or replace a run's row (no longer owned by a process) and write every epoch it has."""
    if not result.run_id:
        raise StoreError(_("A run needs a run_id to be stored."))
    found = db.execute("SELECT kind FROM runs WHERE run_id = ?", (result.run_id,)).fetchone()
    if found is not None and found[0] != "train":
        said = _("The id {run_id} is already used by a {kind}; it was left as it was.")
        raise StoreError(said.format(run_id=result.run_id, kind=found[0]))
    db.execute(
        f"INSERT INTO runs ({RUN_COLUMNS}, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, schema_version = excluded.schema_version,"
        " config = excluded.config, host = excluded.host, device = excluded.device, error = excluded.error,"
        " started_at = excluded.started_at, finished_at = excluded.finished_at, measured = excluded.measured,"
        " owner_host = NULL, owner_pid = NULL, owner_token = NULL",
        (
            result.run_id,
            result.status,
            result.schema_version,
            to_json(result.config),
            to_json(result.host),
            to_json(result.device),
            result.error,
            result.started_at,
            result.finished_at,
            origin,
            measured_json(result),
            utc_now(),
        ),
    )
    if result.trace:
        write_trace(db, result.run_id, result.trace)
    write_epochs(db, result.run_id, result.epochs)
    (stored,) = db.execute("SELECT COUNT(*) FROM epochs WHERE run_id = ?", (result.run_id,)).fetchone()
    if stored == len(result.epochs):  # the stored epochs are exactly these: no need to read them back
        summary.write(db, result.run_id, result.epochs)
    else:
        summary.refresh(db, [result.run_id])


def measured_json(result: RunResult) -> str | None:
    """A run's measurements as stored: a version 4 run's record; an older run's stay in its device info."""
    if result.schema_version < 4 or result.measured is None:
        return None
    return to_json(result.measured.to_dict())


def write_trace(db: sqlite3.Connection, run_id: str, xspace_gz: bytes) -> None:
    """Keep a run's profiler trace (an XSpace, gzipped) beside its row."""
    db.execute("INSERT OR REPLACE INTO traces (run_id, xspace) VALUES (?, ?)", (run_id, xspace_gz))


def require_train(db: sqlite3.Connection, run_id: str) -> None:
    """StoreError unless `run_id` is a stored training run (a sweep's id is never written into)."""
    found = db.execute("SELECT kind FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if found is None:
        raise StoreError(_("There is no run {run_id} in the history to record it into.").format(run_id=run_id))
    if found[0] != "train":
        said = _("The id {run_id} belongs to a {kind}, not a training run; it was left as it was.")
        raise StoreError(said.format(run_id=run_id, kind=found[0]))


def summary_row(row: tuple) -> HistoryRow:
    """A HistoryRow from the SUMMARY_COLUMNS of a runs row: in the fields' order, the two device columns as one."""
    run_id, when, dataset, model, requested, configured, variables_on, name, execution, *rest = row
    device, execution = requested or configured, execution_name(execution)
    return HistoryRow(run_id or "", when, dataset, model, device, variables_on, name, execution, *rest)


def write_epochs(db: sqlite3.Connection, run_id: str | None, epochs: Iterable[EpochMetrics]) -> None:
    """Insert or replace epochs rows."""
    for m in epochs:
        db.execute(
            "INSERT OR REPLACE INTO epochs (run_id, epoch, metrics) VALUES (?, ?, ?)",
            (run_id, m.epoch, to_json(plain(m))),
        )


def plain(value: Any) -> Any:
    """dataclasses.asdict without its deep copy of every number (an epoch's 7,840 template pixels): JSON-ready."""
    if is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list) and value and is_dataclass(value[0]):
        return [plain(v) for v in value]
    return value


def write_record(
    db: sqlite3.Connection, kind: str, payload: dict, run_id: str, status: str, origin: str = "local"
) -> int:
    """Insert or replace a record of `kind` (0 rows if the id is another kind's), its times in their columns."""
    started, finished, error = (v if isinstance(v, str) else None for v in map(payload.get, _RECORD_TEXT))
    return db.execute(
        "INSERT INTO runs (run_id, kind, status, schema_version, payload, started_at, finished_at, error, origin,"
        " stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, payload = excluded.payload,"
        " started_at = excluded.started_at, finished_at = excluded.finished_at, error = excluded.error"
        " WHERE runs.kind = excluded.kind",
        (
            run_id,
            kind,
            status,
            payload.get("schema_version", 1),
            to_json(payload),
            started,
            finished,
            error,
            origin,
            utc_now(),
        ),
    ).rowcount


def read_runs(rows: list[tuple], epoch_rows: Iterable[tuple[str, str]]) -> dict[str, RunResult]:
    """RunResults from runs rows (RUN_COLUMNS) and their (run_id, metrics) epochs rows in epoch order."""
    epochs: dict[str, list[EpochMetrics]] = {row[0]: [] for row in rows}
    for run_id, metrics in epoch_rows:
        epochs[run_id].append(summary.epoch_from_json(metrics))
    found = {}
    for run_id, status, version, config, host, device, error, started, finished, _origin, measured in rows:
        info = json.loads(device)
        found[run_id] = RunResult(
            config=json.loads(config),
            host=json.loads(host),
            device=info,
            status=status,
            error=error,
            epochs=epochs[run_id],
            started_at=started,
            finished_at=finished,
            run_id=run_id,
            schema_version=version,
            measured=Measurements.from_dict(json.loads(measured)) if measured else Measurements.from_device(info),
        )
    return found


def read_sweep(run_id: str, payload: str | None) -> SweepResult:
    """A stored sweep, checked as a sweep file is (RunFileError says what is wrong with it)."""
    try:
        data = json.loads(payload or "null")
    except ValueError:
        raise RunFileError(_("Sweep {run_id} is not stored as JSON.").format(run_id=run_id)) from None
    return check_result(SWEEP_KIND, data)
