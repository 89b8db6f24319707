"""Two JSON Schema keywords as this app checks them (core.history.checks extends its validator with KEYWORDS).

- pattern: the whole string must match (re.fullmatch). jsonschema uses re.search, where `$` also matches before
  a final newline, so a run id "abc\\n" passed the id pattern.
- items: a list whose items are plain bounded numbers, or objects of only such fields (an epoch's calls, a
  template's 784 pixels), is checked in one loop; jsonschema's own walk, with its sentences, runs only where
  that loop finds a problem. Its walk cost about 130 ms of each tutorial run's 150 ms import, and a zip of 200
  such runs took 28 s (bench/zip_import.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from jsonschema import _keywords
from jsonschema.exceptions import ValidationError

Check = Callable[[Any], bool]
_PLAIN = {"type", "minimum", "maximum", "description"}  # what schemas.number() and schemas.whole() write
_TYPES: dict[str, Check] = {
    "integer": lambda v: type(v) is int,  # never true, never 1.0 (checks.py counts only ints as integers)
    "number": lambda v: type(v) in (int, float),
    "null": lambda v: v is None,
}


def full_pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterable[ValidationError]:
    """`pattern`, matched against the whole string."""
    if validator.is_type(instance, "string") and not re.fullmatch(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _plain(schema: Any) -> Check | None:
    """One loop's check for a bounded number schema (maybe null), or None for any other schema."""
    if not isinstance(schema, dict) or not set(schema) <= _PLAIN or "type" not in schema:
        return None
    json_types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if not all(k in _TYPES for k in json_types):
        return None
    tests = [_TYPES[k] for k in json_types]
    low, high = schema.get("minimum"), schema.get("maximum")

    def check(value: Any) -> bool:
        if not any(t(value) for t in tests):
            return False
        return value is None or ((low is None or value >= low) and (high is None or value <= high))

    check.types = {t for k in json_types for t in _PYTHON[k]}  # type: ignore[attr-defined]
    check.bounds = (low, high)  # type: ignore[attr-defined]
    return check


_PYTHON = {"integer": {int}, "number": {int, float}, "null": {type(None)}}


def _all_plain(check: Check, values: list) -> bool:
    """check() over a list, with map, set, min and max doing the looping (a template's 784 pixels) where it can."""
    types = getattr(check, "types", None)
    if types is None or type(None) in types:
        return all(map(check, values))
    if not set(map(type, values)) <= types:
        return False
    low, high = check.bounds  # type: ignore[attr-defined]
    return not values or ((low is None or min(values) >= low) and (high is None or max(values) <= high))


def _fields(schema: Any) -> Check | None:
    """One loop's check for a closed object of plain fields (an epoch's call), or None for any other schema."""
    if (
        not isinstance(schema, dict)
        or schema.get("type") != "object"
        or schema.get("additionalProperties") is not False
    ):
        return None
    if not set(schema) <= {"type", "properties", "required", "additionalProperties", "description"}:
        return None
    checks = {name: _plain(sub) for name, sub in schema.get("properties", {}).items()}
    if any(c is None for c in checks.values()):
        return None
    required = set(schema.get("required", ()))

    def check(value: Any) -> bool:
        return (
            type(value) is dict
            and required <= value.keys() <= checks.keys()
            and all(checks[k](v) for k, v in value.items())
        )

    return check


_CHECKS: dict[int, tuple[Any, Check | None]] = {}  # id(items schema) -> (the schema, its check): schemas never change


def quick_items(validator: Any, items: Any, instance: Any, schema: dict) -> Iterable[ValidationError]:
    """`items`, in one loop where every item passes; jsonschema's own walk (and its errors) otherwise."""
    if type(instance) is list:
        kept = _CHECKS.get(id(items))
        if kept is None or kept[0] is not items:
            kept = _CHECKS[id(items)] = (items, _plain(items) or _fields(items))
        check = kept[1]
        if check is not None and (
            _all_plain(check, instance) if hasattr(check, "types") else all(map(check, instance))
        ):
            return
    yield from _keywords.items(validator, items, instance, schema)


KEYWORDS = {"pattern": full_pattern, "items": quick_items}
