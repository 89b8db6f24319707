"""Checking a run file (or a sweep's) from another machine before it goes near the history.

Every problem raises RunFileError with one sentence naming it; nothing is stored until a
file has passed every check: core.history.limits' limits (size, encoding, depth, numbers, strings)
first, then the fields of its kind. FILE_KINDS maps a file's "kind" to its checker.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from typing import Any

import numpy as np

from core.config import ConfigError, TrainConfig
from core.history.limits import MAX_FILE_BYTES as MAX_FILE_BYTES  # re-exported: the limit callers quote
from core.history.limits import RunFileError as RunFileError
from core.history.limits import check_keys, check_values, parse_bytes, read_limited, show
from core.results import SCHEMA_VERSION, EpochMetrics, RunResult
from core.sweep_results import SWEEP_KIND, SweepFileError, SweepResult

IMPORTABLE_STATUSES = ("completed", "cancelled", "failed", "interrupted")
# Upper bounds that no real measurement reaches; the loss bound is float32's largest
# finite value, which training records in place of a diverged (infinite) loss.
MAX_LOSS = float(np.finfo(np.float32).max)
MAX_SECONDS = 1e7  # about 115 days for one epoch
MAX_RATE = 1e13  # samples or GFLOP per second
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: added the run (or sweep), or found it already there (nothing changed)."""

    run_id: str
    added: bool
    result: RunResult | SweepResult

    @property
    def kind(self) -> str:
        """'train' or 'sweep'."""
        return getattr(self.result, "kind", TRAIN_KIND)

    def describe(self) -> str:
        """One sentence for the user."""
        host = self.result.host.get("hostname") or "an unknown host"
        noun, where = FILE_KINDS[self.kind].noun, FILE_KINDS[self.kind].where(self.result)
        if self.added:
            return f"Imported {noun} {self.run_id} from {host} ({where}, {self.result.status})."
        return f"{noun.capitalize()} {self.run_id} from {host} is already in the history; nothing changed."


# -- field checks --------------------------------------------------------------------------
def _number(low: float, high: float, optional: bool = False) -> Callable[[str, Any], float | None]:
    def check(path: str, value: Any) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            allowed = f"a number from {low:g} to {high:g}" + (" or null" if optional else "")
            raise RunFileError(f"{path} must be {allowed}, not {show(value)}.")
        return float(value)

    return check


def _boolean(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise RunFileError(f"{path} must be true or false, not {show(value)}.")
    return value


# One rule per EpochMetrics field (a test checks the two stay in step).
EPOCH_RULES: dict[str, Callable[[str, Any], Any]] = {
    "train_loss": _number(0, MAX_LOSS),
    "train_accuracy": _number(0, 1),
    "test_loss": _number(0, MAX_LOSS),
    "test_accuracy": _number(0, 1),
    "train_seconds": _number(0, MAX_SECONDS),
    "eval_seconds": _number(0, MAX_SECONDS),
    "samples_per_second": _number(0, MAX_RATE),
    "warmup": _boolean,
    "gflops_per_second": _number(0, MAX_RATE, optional=True),
}
_EPOCH_OPTIONAL = {f.name for f in fields(EpochMetrics) if f.default is not MISSING}


def _object(path: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise RunFileError(
            f"{path} must be an object ({{...}}), not {type(value).__name__ if value is not None else 'null'}."
        )
    return value


def _epoch(i: int, value: Any) -> EpochMetrics:
    path = f"epochs[{i}]"
    item = _object(path, value)
    names = {f.name for f in fields(EpochMetrics)}
    required = {f.name for f in fields(EpochMetrics) if f.name not in _EPOCH_OPTIONAL}
    check_keys(path, item, names, required)
    number = item["epoch"]
    if isinstance(number, bool) or number != i + 1 or not isinstance(number, int):
        raise RunFileError(
            f"{path}.epoch must be {i + 1} (epochs are numbered 1, 2, ... in order), not {show(number)}."
        )
    checked = {name: rule(f"{path}.{name}", item[name]) for name, rule in EPOCH_RULES.items() if name in item}
    return EpochMetrics(epoch=number, **checked)


def _config(value: Any) -> TrainConfig:
    item = _object("config", value)
    names = {f.name for f in fields(TrainConfig)}
    check_keys("config", item, names, names)
    for name, setting in item.items():
        if isinstance(setting, (list, dict)) or (isinstance(setting, str) and len(setting) > 100):
            raise RunFileError(f"config.{name} must be a single short value, not {show(setting)}.")
    try:
        return TrainConfig.from_dict(item)
    except ConfigError as err:
        raise RunFileError(f"config: {err}") from None


def _optional_text(path: str, value: Any, pattern: re.Pattern | None = None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or (pattern is not None and not pattern.match(value)):
        what = "letters, digits, '.', '_' or '-' (at most 64)" if pattern else "text"
        raise RunFileError(f"{path} must be null or {what}, not {show(value)}.")
    return value


def _timestamp(path: str, value: Any) -> str | None:
    text = _optional_text(path, value)
    if text is not None:
        try:
            datetime.fromisoformat(text)
        except ValueError:
            raise RunFileError(
                f"{path} must be an ISO-8601 time such as 2026-01-31T12:00:00+00:00, not {show(text)}."
            ) from None
    return text


_TOP_REQUIRED = {"schema_version", "config", "host", "device", "status", "epochs"}
_TOP_ALLOWED = _TOP_REQUIRED | {"error", "started_at", "finished_at", "run_id", "kind"}  # kind: "train" only


def validate_run(data: Any) -> RunResult:
    """A RunResult from a parsed run file, or RunFileError naming the first problem."""
    top = _object("The file", data)
    if "kind" in top and top["kind"] != "train":  # e.g. a batch-size sweep's file
        raise RunFileError(f"The file holds a {show(top['kind'])} result; only training runs can be imported here.")
    version = top.get("schema_version")
    whole = type(version) is int  # not bool, not 1.0
    if whole and SCHEMA_VERSION < version < 10**6:
        raise RunFileError(f"schema_version {version} is newer than this app reads ({SCHEMA_VERSION}); update the app.")
    check_keys("The file", top, _TOP_ALLOWED, _TOP_REQUIRED)
    if not whole or version != SCHEMA_VERSION:
        raise RunFileError(f"schema_version must be {SCHEMA_VERSION}, not {show(version)}.")
    check_values(top)
    config = _config(top["config"])
    host, device = _object("host", top["host"]), _object("device", top["device"])
    for path, value in (("host.hostname", host.get("hostname")), ("device.variables_on", device.get("variables_on"))):
        _optional_text(path, value)
    status = top["status"]
    if status not in IMPORTABLE_STATUSES:
        raise RunFileError(f"status must be one of {', '.join(IMPORTABLE_STATUSES)}, not {show(status)}.")
    raw_epochs = top["epochs"]
    if not isinstance(raw_epochs, list):
        raise RunFileError(f"epochs must be a list, not {show(raw_epochs)}.")
    if len(raw_epochs) > config.epochs:
        raise RunFileError(f"epochs lists {len(raw_epochs)} epochs but config.epochs is {config.epochs}.")
    if status == "completed" and len(raw_epochs) != config.epochs:
        raise RunFileError(f"A completed run has all {config.epochs} epochs; this one lists {len(raw_epochs)}.")
    epochs = [_epoch(i, e) for i, e in enumerate(raw_epochs)]
    return RunResult(
        config=config.to_dict(),
        host=host,
        device=device,
        status=status,
        error=_optional_text("error", top.get("error")),
        epochs=epochs,
        started_at=_timestamp("started_at", top.get("started_at")),
        finished_at=_timestamp("finished_at", top.get("finished_at")),
        run_id=_optional_text("run_id", top.get("run_id"), _RUN_ID),
        schema_version=SCHEMA_VERSION,
    )


def validate_sweep(data: Any) -> SweepResult:
    """A SweepResult from a parsed sweep file (SweepResult.from_dict's checks, then an import's), or RunFileError."""
    check_values(_object("The file", data))
    try:
        result = SweepResult.from_dict(data)
    except SweepFileError as err:
        raise RunFileError(str(err)) from None
    except ConfigError as err:
        raise RunFileError(f"config: {err}") from None
    if result.status not in IMPORTABLE_STATUSES:  # a running sweep is never written to a file
        raise RunFileError(f"status must be one of {', '.join(IMPORTABLE_STATUSES)}, not {show(result.status)}.")
    _optional_text("run_id", result.run_id, _RUN_ID)
    for name in ("started_at", "finished_at"):
        _timestamp(name, getattr(result, name))
    return result


@dataclass(frozen=True)
class FileKind:
    """One kind of result file: its checker, and how an import of it is described."""

    noun: str
    validate: Callable[[Any], RunResult | SweepResult]
    where: Callable[[Any], str]  # the device(s) it ran on


TRAIN_KIND = "train"  # a training run's file may leave "kind" out
FILE_KINDS: dict[str, FileKind] = {
    TRAIN_KIND: FileKind("run", validate_run, lambda r: r.device.get("variables_on") or r.config.get("device")),
    SWEEP_KIND: FileKind("sweep", validate_sweep, lambda r: ", ".join(r.config["devices"])),
}


def parse_run_file(data: bytes) -> RunResult:
    """Check a training run file's bytes (size, encoding, JSON, every field); raise RunFileError if bad."""
    return validate_run(parse_bytes(data))


def parse_result_file(data: bytes) -> RunResult | SweepResult:
    """Check a file of any kind in FILE_KINDS (a training run or a sweep); raise RunFileError if bad."""
    top = parse_bytes(data)
    kind = top.get("kind", TRAIN_KIND) if isinstance(top, dict) else TRAIN_KIND
    if not isinstance(kind, str) or kind not in FILE_KINDS:
        raise RunFileError(f"kind must be one of {', '.join(FILE_KINDS)}, not {show(kind)}.")
    return FILE_KINDS[kind].validate(top)


def read_run_file(path: str | os.PathLike) -> RunResult:
    """Read and check a training run file from disk."""
    return parse_run_file(read_limited(path))


def read_result_file(path: str | os.PathLike) -> RunResult | SweepResult:
    """Read and check a file of any kind in FILE_KINDS from disk."""
    return parse_result_file(read_limited(path))


def content_id(result: RunResult | SweepResult) -> str:
    """A stable id for a file that has none: a hash of its content, so importing it twice finds it."""
    body = result.to_dict()
    body["run_id"] = None
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"file-{digest[:16]}"
