"""Reading untrusted JSON within limits: size, UTF-8, nesting depth, finite numbers, sane strings and lists.

The first gate for any file from another machine, whatever it holds (core.history.checks then checks the
fields of each kind). Every problem raises RunFileError with one sentence naming it. Limits:
MAX_FILE_BYTES (5 MB; a 1,000-epoch run is ~0.4 MB), nesting MAX_DEPTH deep, strings MAX_STRING
characters, MAX_ITEMS entries in any list or object.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import Any

import numpy as np

MAX_FILE_BYTES = 5_000_000
_LIMIT = f"{MAX_FILE_BYTES / 1e6:g} MB"
MAX_DEPTH = 10  # the format itself needs 4 (host -> gpus -> one gpu)
MAX_STRING = 10_000
MAX_ITEMS = 1_000  # entries in any one list or object
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
MAX_LABEL = 200  # a host or device label kept on import; a terminal column shows at most MAX_CELL
MAX_CELL = 64
# ANSI escape sequences (CSI, OSC, and two-character ones) go whole; any other control character, and the
# bidirectional overrides that reorder text on screen, become a space.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class RunFileError(ValueError):
    """A run file was refused; the message is one sentence naming the problem."""


def show(value: Any) -> str:
    """A value as the sentence quotes it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _nesting_depth(text: str) -> int:
    """Deepest [ or { nesting outside strings, found without recursion (so hostile depth cannot crash us)."""
    skeleton = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8", "replace"), np.uint8)
    step = np.isin(skeleton, (ord("["), ord("{"))).astype(np.int32) - np.isin(skeleton, (ord("]"), ord("}")))
    return int(np.cumsum(step).max(initial=0))


def without_controls(text: str) -> str:
    """Text safe for a terminal: escape sequences removed, other control characters (newlines too) made spaces."""
    return _CONTROLS.sub(" ", _ESCAPES.sub("", text))


def printable(text: str, limit: int = MAX_LABEL) -> str:
    """A label safe to show: without_controls(), cut to `limit` characters."""
    text = without_controls(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clean_labels(value: Any) -> Any:
    """Every string in a host's or device's description made printable() (a copy; numbers stay as they are)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [clean_labels(v) for v in value]
    if isinstance(value, dict):
        return {k: clean_labels(v) for k, v in value.items()}
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice is refused (json would silently keep the last)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise RunFileError(
                f'The file gives the key "{show_key(key)}" twice in one object; each key may appear once.'
            )
        seen[key] = value
    return seen


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
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
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


def show_key(name: str) -> str:
    """An object's key as a path names it: without quotes, cut to 40 characters."""
    text = repr(name)[1:-1]  # repr: a hostile key cannot put a newline or a lone surrogate in the message
    return text if len(text) <= 40 else text[:37] + "..."


def check_values(value: Any) -> None:
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
            stack.extend((v, f"{where}.{show_key(k)}" if where else show_key(k)) for k, v in item.items())


def read_limited(path: str | os.PathLike) -> bytes:
    """A file's bytes, reading no more than the size limit allows."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer forever; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise RunFileError(
                    "The file is not a regular file (a directory, FIFO, device or socket); name a .json file."
                )
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise RunFileError(f"The file cannot be read ({err.strerror or err}).") from None
    if len(data) > MAX_FILE_BYTES:
        raise RunFileError(f"The file is larger than the limit of {MAX_FILE_BYTES:,} bytes ({_LIMIT}).")
    return data


def parse_bytes(data: Any) -> Any:
    """The JSON value in a file's bytes, within the size, encoding and depth limits (check_values does the values)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise RunFileError("A run file must be given as bytes.")
    return _parse_json(bytes(data))
