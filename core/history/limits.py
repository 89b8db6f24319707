"""Reading untrusted JSON within limits: size, UTF-8, nesting depth, finite numbers, sane strings and lists.

The first gate for any file from another machine, whatever it holds (core.history.checks then checks the
fields of each kind). Every problem raises RunFileError with one sentence naming it. Limits:
MAX_FILE_BYTES (5 MiB; a 1,000-epoch run is ~0.4 MB), nesting MAX_DEPTH deep, strings MAX_STRING
characters, MAX_ITEMS entries in any list or object.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import Any

from core.language.i18n import N_, _

MAX_FILE_BYTES = 5 * 2**20  # Streamlit's server.maxUploadSize is 5 (MiB) too: the page's uploads stop at this size
SIZE_WORDS = f"{MAX_FILE_BYTES / 2**20:g} MiB"
MAX_DEPTH = 10  # the format itself needs 4 (host -> gpus -> one gpu)
TOO_DEEP = N_("The file nests lists or objects more than {depth} deep; a run file never does.")
TOO_LARGE = N_("The file is {size:,} bytes; the limit is {limit:,} bytes ({words}).")
MAX_STRING = 10_000
MAX_ITEMS = 1_000  # entries in any one list or object
MAX_LABEL = 200  # a host or device label kept on import; a terminal column shows at most MAX_CELL
MAX_CELL = 64
# ANSI escape sequences (CSI, OSC, and two-character ones) go whole; any other control character, and the
# bidirectional overrides that reorder text on screen, become a space.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


_NUMBERS = {int, float}  # bool is neither: type(True) is bool


class RunFileError(ValueError):
    """A run file was refused; the message is one sentence naming the problem."""


def show(value: Any) -> str:
    """A value as the sentence quotes it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
            said = _('The file gives the key "{key}" twice in one object; each key may appear once.')
            raise RunFileError(said.format(key=show_key(key)))
        seen[key] = value
    return seen


def _reject_constant(name: str) -> Any:
    said = _("The file contains {name}, which is not a number JSON allows; every value must be finite.")
    raise RunFileError(said.format(name=name))


def _parse_json(data: bytes) -> Any:
    if len(data) > MAX_FILE_BYTES:
        raise RunFileError(_(TOO_LARGE).format(size=len(data), limit=MAX_FILE_BYTES, words=SIZE_WORDS))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        said = _("The file is not UTF-8 text (byte {byte} cannot be decoded).")
        raise RunFileError(said.format(byte=err.start)) from None
    try:  # nesting: the decoder's own recursion limit for extreme depth, check_values() for the rest
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as err:
        said = _("The file is not valid JSON ({problem} at line {line}, column {column}).")
        raise RunFileError(said.format(problem=err.msg, line=err.lineno, column=err.colno)) from None
    except RecursionError:
        raise RunFileError(_(TOO_DEEP).format(depth=MAX_DEPTH)) from None
    except RunFileError:
        raise
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise RunFileError(_("The file holds a number with too many digits to be a measurement.")) from None


def show_key(name: str) -> str:
    """An object's key as a path names it: without quotes, cut to 40 characters."""
    text = repr(name)[1:-1]  # repr: a hostile key cannot put a newline or a lone surrogate in the message
    return text if len(text) <= 40 else text[:37] + "..."


def check_values(value: Any) -> None:
    """Every number finite, every string real Unicode of sane length, every container of sane size."""
    # Each entry keeps its parent and key, and its path is spelled only for the sentence: spelling every value's
    # path up front was a third of a tutorial run's import (bench/zip_import.py).
    stack: list[tuple[Any, Any, int]] = [(value, None, 1)]  # (value, its (parent, key), its nesting depth)
    while stack:
        item, place, depth = stack.pop()
        of_type = type(item)
        if of_type is float and not math.isfinite(item):
            said = _("{where} is {value}, too large to be a measurement; every number must be finite.")
            raise RunFileError(said.format(where=_path(place), value=item))
        if of_type is int and abs(item) > 2**63:
            raise RunFileError(_("{where} is a whole number too large to be a measurement.").format(where=_path(place)))
        if of_type is str:
            if len(item) > MAX_STRING:
                said = _("{where} is {count:,} characters long; the limit is {limit:,}.")
                raise RunFileError(said.format(where=_path(place), count=len(item), limit=MAX_STRING))
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                said = _("{where} contains an unpaired surrogate escape, which is not text.")
                raise RunFileError(said.format(where=_path(place))) from None
        elif of_type is list or of_type is dict:
            if depth > MAX_DEPTH:
                raise RunFileError(_(TOO_DEEP).format(depth=MAX_DEPTH))
            if len(item) > MAX_ITEMS:
                said = _("{where} has {count:,} entries; the limit is {limit:,}.")
                raise RunFileError(said.format(where=_path(place), count=len(item), limit=MAX_ITEMS))
            if of_type is list and item and set(map(type, item)) <= _NUMBERS and max(map(abs, item)) <= 2**63:
                continue  # a list of sane numbers (a template's pixels): each entry would pass the checks above
            pairs = enumerate(item) if of_type is list else item.items()
            stack.extend((v, (place, k), depth + 1) for k, v in pairs)


def _path(place: Any) -> str:
    """'epochs[3].test_accuracy' from a (parent, key) chain; 'The file' for the top."""
    keys = []
    while place is not None:
        place, key = place
        keys.append(key)
    return path_text(reversed(keys)) or _("The file")


def path_text(path: Any) -> str:
    """A place in a document as a sentence names it: config.batch_size, epochs[3].test_accuracy."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{show_key(key)}" if out else show_key(key))
    return out


def read_limited(path: str | os.PathLike) -> bytes:
    """A file's bytes, reading no more than the size limit allows."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer forever; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as fh:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise RunFileError(
                    _("The file is not a regular file (a directory, FIFO, device or socket); name a .json file.")
                )
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise RunFileError(_("The file cannot be read ({text}).").format(text=err.strerror or err)) from None
    if len(data) > MAX_FILE_BYTES:
        size = max(info.st_size, len(data))  # its size on disk, not the bytes read to find it too large
        raise RunFileError(_(TOO_LARGE).format(size=size, limit=MAX_FILE_BYTES, words=SIZE_WORDS))
    return data


def parse_bytes(data: Any) -> Any:
    """The JSON value in a file's bytes, within the size and encoding limits (check_values: depth and values)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise RunFileError(_("A run file must be given as bytes."))
    return _parse_json(bytes(data))
