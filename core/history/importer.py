"""Checking a run file (or a sweep's) from another machine before it goes near the history.

Every problem raises RunFileError with one sentence naming it; nothing is stored until a file has passed
every check: core.history.limits' limits (size, encoding, depth, numbers, strings) first, then its kind's
schema and cross-field checks (core.history.checks), then the rules for files only (no running job).
FILE_KINDS maps a file's "kind" to its checker.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from core.history.checks import check_result
from core.history.limits import MAX_FILE_BYTES as MAX_FILE_BYTES  # re-exported: the limit callers quote
from core.history.limits import RunFileError as RunFileError
from core.history.limits import check_values, clean_labels, parse_bytes, read_limited, show
from core.history.schemas import IMPORTABLE_STATUSES, TRAIN_KIND
from core.language.i18n import N_, _
from core.results import SWEEP_KIND, RunResult, SweepResult, utc_now
from core.results.states import State

__all__ = ["IMPORTABLE_STATUSES", "MAX_FILE_BYTES", "RunFileError"]


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: added the run (or sweep), or found it already there (nothing changed)."""

    run_id: str
    added: bool
    result: RunResult | SweepResult
    replaced: RunResult | None = None  # the partial run of the same id the file's whole run replaced

    @property
    def kind(self) -> str:
        """'train' or 'sweep'."""
        return getattr(self.result, "kind", TRAIN_KIND)

    def describe(self) -> str:
        """One sentence for the user."""
        host = self.result.host.get("hostname") or _("an unknown host")
        kind = FILE_KINDS[self.kind]
        values = {
            "run_id": self.run_id,
            "host": host,
            "where": kind.where(self.result),
            "status": _(self.result.status),
        }
        if self.replaced is not None:  # only a training run has a partial one to replace
            old = self.replaced
            said = _(
                "Replaced the partial run {run_id} ({old_status}, {stored} of {epochs} epochs stored) with the file's, "
                "from {host} ({where}, {status}, {count} epochs)."
            )
            stored = {"old_status": _(old.status), "stored": len(old.epochs), "epochs": old.config.get("epochs")}
            return said.format(**values, **stored, count=len(self.result.epochs))
        return _(kind.imported if self.added else kind.already).format(**values)


def _check_file(kind: str, data: Any) -> RunResult | SweepResult:
    """Limits, labels made printable, the schema and cross-field checks, then: a file never holds a running job."""
    check_values(data)
    if isinstance(data, dict):  # another machine's names reach terminals and pages: no escapes, no 10,000 columns
        data = {k: clean_labels(v) if k in ("host", "device") else v for k, v in data.items()}
    result = check_result(kind, data)
    if result.status not in IMPORTABLE_STATUSES:
        said = _("status must be one of {allowed}, not {value}.")
        raise RunFileError(said.format(allowed=", ".join(IMPORTABLE_STATUSES), value=show(result.status)))
    _check_dates(result.started_at, result.finished_at)
    return result


# Another machine's clock may run ahead of this one's by a little; a date further ahead than this is refused.
CLOCK_SKEW = timedelta(days=1)


def _check_dates(started: str | None, finished: str | None) -> None:
    """A file is not from the future, and did not finish before it started (either would sort it wrongly)."""
    ahead = datetime.now(timezone.utc) + CLOCK_SKEW
    when = {name: _utc(value) for name, value in (("started_at", started), ("finished_at", finished)) if value}
    for name, moment in when.items():
        if moment is not None and moment > ahead:
            said = _("{name} must not be in the future (this machine's clock says {now}), not {value}.")
            raise RunFileError(said.format(name=name, now=utc_now(), value=show(moment.isoformat())))
    if when.get("started_at") and when.get("finished_at") and when["finished_at"] < when["started_at"]:
        said = _("finished_at must not be before started_at ({started}), not {value}.")
        raise RunFileError(said.format(started=started, value=show(finished)))


def _utc(value: str) -> datetime | None:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def validate_run(data: Any) -> RunResult:
    """A RunResult from a parsed run file, or RunFileError naming the first problem."""
    if isinstance(data, dict) and data.get("kind", TRAIN_KIND) != TRAIN_KIND:  # e.g. a batch-size sweep's file
        said = _("The file holds a {kind} result; only training runs can be imported here.")
        raise RunFileError(said.format(kind=show(data["kind"])))
    return _check_file(TRAIN_KIND, data)


def validate_sweep(data: Any) -> SweepResult:
    """A SweepResult from a parsed sweep file, or RunFileError naming the first problem."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind != SWEEP_KIND:
        raise RunFileError(
            _('kind must be "sweep" ("kind": "sweep" marks a sweep file), not {value}.').format(value=show(kind))
        )
    return _check_file(SWEEP_KIND, data)


@dataclass(frozen=True)
class FileKind:
    """One kind of result file: its checker, and how an import of it is described."""

    validate: Callable[[Any], RunResult | SweepResult]
    where: Callable[[Any], str]  # the device(s) it ran on
    imported: str  # the sentences (marked N_) of an import that added it, or found it already there
    already: str
    different: str  # refused: another result of this kind has its id


FILE_KINDS: dict[str, FileKind] = {
    TRAIN_KIND: FileKind(
        validate_run,
        lambda r: r.device.get("variables_on") or r.config.get("device"),
        N_("Imported run {run_id} from {host} ({where}, {status})."),
        N_("Run {run_id} from {host} is already in the history; nothing changed."),
        N_(
            "A different run with id {run_id} is already in the history; python -m core delete {run_id} "
            "(or Delete in the History view) removes it, then import again."
        ),
    ),
    SWEEP_KIND: FileKind(
        validate_sweep,
        lambda r: ", ".join(r.config["devices"]),
        N_("Imported sweep {run_id} from {host} ({where}, {status})."),
        N_("Sweep {run_id} from {host} is already in the history; nothing changed."),
        N_(
            "A different sweep with id {run_id} is already in the history; python -m core delete {run_id} "
            "(or Delete in the History view) removes it, then import again."
        ),
    ),
}
# A result's status as an import states it (progress.STATUS_WORDS says "stopped" for cancelled: the page's word).
IMPORTED_STATUSES = (N_("completed"), N_("cancelled"), N_("failed"), N_("interrupted"))


def parse_run_file(data: bytes) -> RunResult:
    """Check a training run file's bytes (size, encoding, JSON, every field); raise RunFileError if bad."""
    return validate_run(parse_bytes(data))


def parse_result_file(data: bytes) -> RunResult | SweepResult:
    """Check a file of any kind in FILE_KINDS (a training run or a sweep); raise RunFileError if bad."""
    top = parse_bytes(data)
    kind = top.get("kind", TRAIN_KIND) if isinstance(top, dict) else TRAIN_KIND
    if not isinstance(kind, str) or kind not in FILE_KINDS:
        said = _("kind must be one of {allowed}, not {value}.")
        raise RunFileError(said.format(allowed=", ".join(FILE_KINDS), value=show(kind)))
    return FILE_KINDS[kind].validate(top)


def read_result_file(path: str | os.PathLike) -> RunResult | SweepResult:
    """Read and check a file of any kind in FILE_KINDS from disk."""
    return parse_result_file(read_limited(path))


def completes(stored: Any, result: Any) -> bool:
    """Whether a file's run is the whole of a stored partial run: the same config, the stored epochs exactly its first
    ones, more of them (or a final state where the row's is not), and the stored run no longer running nor completed.
    (The CLI's advice after a full disk: `import` of the --json file replaces the partial run.)"""
    if not isinstance(stored, RunResult) or not isinstance(result, RunResult):
        return False
    n = len(stored.epochs)
    return (
        stored.status not in (State.RUNNING, State.COMPLETED)
        and stored.config == result.config
        and stored.epochs == result.epochs[:n]
        and (len(result.epochs) > n or (len(result.epochs) == n and result.status == State.COMPLETED))
    )


def content_id(result: RunResult | SweepResult) -> str:
    """A stable id for a file that has none: a hash of its content, so importing it twice finds it."""
    body = result.to_dict()
    body["run_id"] = None
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"file-{digest[:16]}"
