"""The JSON Schema field types of the result files (core.history.schemas), each with its allowed values in words.

A field's "description" is the end of its refusal sentence ("epochs[3].test_accuracy must be <description>, not
1.5."), so it is written as an allowed value.
"""

from __future__ import annotations

from typing import Any

SCALAR = ["string", "number", "boolean", "null"]


def _bounded(json_type: str, low: float, high: float | None, nullable: bool, words: str) -> dict[str, Any]:
    schema = {"type": [json_type, "null"] if nullable else json_type, "minimum": low}
    if high is not None:
        schema["maximum"] = high
    return {**schema, "description": words + (" or null" if nullable else "")}


def number(low: float, high: float | None = None, nullable: bool = False) -> dict[str, Any]:
    """A number from low to high (or at least low), maybe null."""
    words = f"a number from {low:g} to {high:g}" if high is not None else f"a finite number of at least {low:g}"
    return _bounded("number", low, high, nullable, words)


def whole(low: int, high: int | None = None, nullable: bool = False) -> dict[str, Any]:
    """A whole number (never true, never 1.0) from low to high (or at least low), maybe null."""
    words = f"a whole number from {low} to {high}" if high is not None else f"a whole number of at least {low}"
    return _bounded("integer", low, high, nullable, words)


def text(nullable: bool = False) -> dict[str, Any]:
    """A string, maybe null."""
    return {"type": ["string", "null"] if nullable else "string", "description": "text or null" if nullable else "text"}


def closed(properties: dict[str, Any], required: tuple[str, ...] = (), words: str = "an object ({...})") -> dict:
    """An object with these fields only."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
        "description": words,
    }


def open_ended(properties: dict[str, Any], words: str = "an object ({...})") -> dict:
    """An object whose known fields are checked and whose other fields (a newer build's) are kept."""
    return {"type": "object", "properties": properties, "description": words}


def list_of(items: dict[str, Any], max_items: int | None = None, words: str = "a list") -> dict[str, Any]:
    """A JSON array of items."""
    schema = {"type": "array", "items": items, "description": words}
    return {**schema, "maxItems": max_items} if max_items is not None else schema
