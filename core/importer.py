"""Checking a run file from another machine before it goes near the history.

Every problem raises RunFileError with one sentence naming it; nothing is stored until a
file has passed every check. Limits: MAX_FILE_BYTES (5 MB; a 1,000-epoch run is ~0.4 MB),
nesting MAX_DEPTH deep, strings MAX_STRING characters.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from typing import Any

import numpy as np

from core.config import ConfigError, TrainConfig
from core.results import SCHEMA_VERSION, EpochMetrics, RunResult

MAX_FILE_BYTES = 5_000_000
_LIMIT = f"{MAX_FILE_BYTES / 1e6:g} MB"
MAX_DEPTH = 10  # the format itself needs 4 (host -> gpus -> one gpu)
MAX_STRING = 10_000
MAX_ITEMS = 1_000  # entries in any one list or object
IMPORTABLE_STATUSES = ("completed", "cancelled", "failed", "interrupted")
# Upper bounds that no real measurement reaches; the loss bound is float32's largest
# finite value, which training records in place of a diverged (infinite) loss.
MAX_LOSS = float(np.finfo(np.float32).max)
MAX_SECONDS = 1e7  # about 115 days for one epoch
MAX_RATE = 1e13  # samples or GFLOP per second
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


class RunFileError(ValueError):
    """A run file was refused; the message is one sentence naming the problem."""


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: added the run, or found it already there (nothing changed)."""

    run_id: str
    added: bool
    result: RunResult

    def describe(self) -> str:
        """One sentence for the user."""
        host = self.result.host.get("hostname") or "an unknown host"
        where = self.result.device.get("variables_on") or self.result.config.get("device")
        if self.added:
            return f"Imported run {self.run_id} from {host} ({where}, {self.result.status})."
        return f"Run {self.run_id} from {host} is already in the history; nothing changed."


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- bytes -> JSON value ----------------------------------------------------------------
def _nesting_depth(text: str) -> int:
    """Deepest [ or { nesting outside strings, found without recursion (so hostile depth cannot crash us)."""
    skeleton = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8", "replace"), np.uint8)
    step = np.isin(skeleton, (ord("["), ord("{"))).astype(np.int32) - np.isin(skeleton, (ord("]"), ord("}")))
    return int(np.cumsum(step).max(initial=0))


def _reject_constant(name: str) -> Any:
    raise RunFileError(f"The file contains {name}, which is not a number JSON allows; every value must be finite.")


def _parse_json(data: bytes) -> Any:
    if len(data) > MAX_FILE_BYTES:
        raise RunFileError(f"The file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,} bytes ({_LIMIT}).")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise RunFileError(f"The file is not UTF-8 text (byte {err.start} cannot be decoded).") from None
    if _nesting_depth(text) > MAX_DEPTH:
        raise RunFileError(f"The file nests lists or objects more than {MAX_DEPTH} deep; a run file never does.")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise RunFileError(
            f"The file is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})."
        ) from None
    except RecursionError:
        raise RunFileError(f"The file nests lists or objects more than {MAX_DEPTH} deep.") from None
    except RunFileError:
        raise
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise RunFileError("The file holds a number with too many digits to be a measurement.") from None


def _key(name: str) -> str:
    text = repr(name)[1:-1]  # repr: a hostile key cannot put a newline or a lone surrogate in the message
    return text if len(text) <= 40 else text[:37] + "..."


def _check_values(value: Any) -> None:
    """Every number finite, every string real Unicode of sane length, every container of sane size."""
    stack = [(value, "")]
    while stack:
        item, where = stack.pop()
        path = where or "The file"
        if isinstance(item, float) and not math.isfinite(item):
            raise RunFileError(f"{path} is {item}, too large to be a measurement; every number must be finite.")
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > 2**63:
            raise RunFileError(f"{path} is a whole number too large to be a measurement.")
        if isinstance(item, str):
            if len(item) > MAX_STRING:
                raise RunFileError(f"{path} is {len(item):,} characters long; the limit is {MAX_STRING:,}.")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise RunFileError(f"{path} contains an unpaired surrogate escape, which is not text.") from None
        if isinstance(item, (list, dict)) and len(item) > MAX_ITEMS:
            raise RunFileError(f"{path} has {len(item):,} entries; the limit is {MAX_ITEMS:,}.")
        if isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
        elif isinstance(item, dict):
            stack.extend((v, f"{where}.{_key(k)}" if where else _key(k)) for k, v in item.items())


# -- field checks --------------------------------------------------------------------------
def _number(low: float, high: float, optional: bool = False) -> Callable[[str, Any], float | None]:
    def check(path: str, value: Any) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            allowed = f"a number from {low:g} to {high:g}" + (" or null" if optional else "")
            raise RunFileError(f"{path} must be {allowed}, not {_show(value)}.")
        return float(value)

    return check


def _boolean(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise RunFileError(f"{path} must be true or false, not {_show(value)}.")
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


def _known_keys(path: str, value: dict, allowed: set[str], required: set[str]) -> None:
    missing = sorted(required - set(value))
    if missing:
        raise RunFileError(f"{path} is missing the field {missing[0]!r}.")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise RunFileError(f"{path} has an unknown field {_show(unknown[0])}.")


def _epoch(i: int, value: Any) -> EpochMetrics:
    path = f"epochs[{i}]"
    item = _object(path, value)
    names = {f.name for f in fields(EpochMetrics)}
    required = {f.name for f in fields(EpochMetrics) if f.name not in _EPOCH_OPTIONAL}
    _known_keys(path, item, names, required)
    number = item["epoch"]
    if isinstance(number, bool) or number != i + 1 or not isinstance(number, int):
        raise RunFileError(
            f"{path}.epoch must be {i + 1} (epochs are numbered 1, 2, ... in order), not {_show(number)}."
        )
    checked = {name: rule(f"{path}.{name}", item[name]) for name, rule in EPOCH_RULES.items() if name in item}
    return EpochMetrics(epoch=number, **checked)


def _config(value: Any) -> TrainConfig:
    item = _object("config", value)
    names = {f.name for f in fields(TrainConfig)}
    _known_keys("config", item, names, names)
    for name, setting in item.items():
        if isinstance(setting, (list, dict)) or (isinstance(setting, str) and len(setting) > 100):
            raise RunFileError(f"config.{name} must be a single short value, not {_show(setting)}.")
    try:
        return TrainConfig.from_dict(item)
    except ConfigError as err:
        raise RunFileError(f"config: {err}") from None


def _optional_text(path: str, value: Any, pattern: re.Pattern | None = None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or (pattern is not None and not pattern.match(value)):
        what = "letters, digits, '.', '_' or '-' (at most 64)" if pattern else "text"
        raise RunFileError(f"{path} must be null or {what}, not {_show(value)}.")
    return value


def _timestamp(path: str, value: Any) -> str | None:
    text = _optional_text(path, value)
    if text is not None:
        try:
            datetime.fromisoformat(text)
        except ValueError:
            raise RunFileError(
                f"{path} must be an ISO-8601 time such as 2026-01-31T12:00:00+00:00, not {_show(text)}."
            ) from None
    return text


_TOP_REQUIRED = {"schema_version", "config", "host", "device", "status", "epochs"}
_TOP_ALLOWED = _TOP_REQUIRED | {"error", "started_at", "finished_at", "run_id", "kind"}  # kind: "train" only


def validate_run(data: Any) -> RunResult:
    """A RunResult from a parsed run file, or RunFileError naming the first problem."""
    top = _object("The file", data)
    if "kind" in top and top["kind"] != "train":  # e.g. a batch-size sweep's file
        raise RunFileError(f"The file holds a {_show(top['kind'])} result; only training runs can be imported here.")
    version = top.get("schema_version")
    whole = type(version) is int  # not bool, not 1.0
    if whole and SCHEMA_VERSION < version < 10**6:
        raise RunFileError(f"schema_version {version} is newer than this app reads ({SCHEMA_VERSION}); update the app.")
    _known_keys("The file", top, _TOP_ALLOWED, _TOP_REQUIRED)
    if not whole or version != SCHEMA_VERSION:
        raise RunFileError(f"schema_version must be {SCHEMA_VERSION}, not {_show(version)}.")
    _check_values(top)
    config = _config(top["config"])
    host, device = _object("host", top["host"]), _object("device", top["device"])
    for path, value in (("host.hostname", host.get("hostname")), ("device.variables_on", device.get("variables_on"))):
        _optional_text(path, value)
    status = top["status"]
    if status not in IMPORTABLE_STATUSES:
        raise RunFileError(f"status must be one of {', '.join(IMPORTABLE_STATUSES)}, not {_show(status)}.")
    raw_epochs = top["epochs"]
    if not isinstance(raw_epochs, list):
        raise RunFileError(f"epochs must be a list, not {_show(raw_epochs)}.")
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


def parse_run_file(data: bytes) -> RunResult:
    """Check a run file's bytes (size, encoding, JSON, every field); raise RunFileError if bad."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise RunFileError("A run file must be given as bytes.")
    return validate_run(_parse_json(bytes(data)))


def read_run_file(path: str | os.PathLike) -> RunResult:
    """Read and check a run file from disk, reading no more than the size limit allows."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise RunFileError(f"The file cannot be read ({err.strerror or err}).") from None
    if len(data) > MAX_FILE_BYTES:
        raise RunFileError(f"The file is larger than the limit of {MAX_FILE_BYTES:,} bytes ({_LIMIT}).")
    return parse_run_file(data)


def content_id(result: RunResult) -> str:
    """A stable id for a file that has none: a hash of its content, so importing it twice finds it."""
    body = result.to_dict()
    body["run_id"] = None
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"file-{digest[:16]}"
