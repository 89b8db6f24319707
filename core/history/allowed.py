"""What a field of a result file allows, in the page's language: the end of a refusal sentence.

core.history.schemas writes each field's "description" in English (the CLI's words, and the schema's own); here
each description's shape is read back into a whole phrase marked for the catalogs, its numbers as written there.
tests/test_i18n.py checks that every description of every schema is read by one of them.
"""

from __future__ import annotations

import re

from core.language.i18n import N_, _

# A description's shape -> its phrase; the numbers a shape captures are put back as they were written.
SHAPES = {
    r"a number from (?P<low>\S+) to (?P<high>\S+)": N_("a number from {low} to {high}"),
    r"a finite number of at least (?P<low>\S+)": N_("a finite number of at least {low}"),
    r"a whole number from (?P<low>\S+) to (?P<high>\S+)": N_("a whole number from {low} to {high}"),
    r"a whole number of at least (?P<low>\S+)": N_("a whole number of at least {low}"),
    r"a list of at most (?P<count>\d+) calls": N_("a list of at most {count} calls"),
    r"a list of at most (?P<count>\d+) numbers": N_("a list of at most {count} numbers"),
    r"a list of at most (?P<count>\d+) test-set rows": N_("a list of at most {count} test-set rows"),
    r"a list of at most (?P<count>\d+) slices": N_("a list of at most {count} slices"),
    r"a list of at most (?P<count>\d+) labels from 0 to 9": N_("a list of at most {count} labels from 0 to 9"),
    r"a short value or a list of at most (?P<count>\d+) short values": N_(
        "a short value or a list of at most {count} short values"
    ),
    r"one of (?P<allowed>.+)": N_("one of {allowed}"),
}
OR_NULL = N_("{allowed} or null")
# Descriptions without a number: each is its own msgid (a file's literal values, "1" or '"sweep"', stay as they are).
PHRASES = (
    N_('"train" (or no kind)'),
    N_("a device name such as cpu or gpu"),
    N_("a list"),
    N_("a list of 784 whole numbers from 0 to 255"),
    N_("a short value"),
    N_("a single short value"),
    N_("an object ({...})"),
    N_("null or a list of 10 templates of 784 numbers from 0 to 255"),
    N_("null or an ISO-8601 time such as 2026-01-31T12:00:00+00:00"),
    N_("null or an object ({...})"),
    N_("null or letters, digits, '.', '_' or '-' (at most 64)"),
    N_("text"),
    N_("true or false"),
    N_("as the file format says"),  # a field without a description
)


def read(description: str) -> str | None:
    """The phrase of a description in the page's language; None where no shape or phrase reads it."""
    if description.endswith(" or null") and not description.startswith("null or "):
        inner = read(description.removesuffix(" or null"))
        return None if inner is None else _(OR_NULL).format(allowed=inner)
    for shape, phrase in SHAPES.items():
        if found := re.fullmatch(shape, description):
            return _(phrase).format(**found.groupdict())
    return _(description) if description in PHRASES else None


def allowed_words(schema: dict) -> str:
    """What a schema's field allows, in the page's language (a description no shape reads: as written)."""
    description = schema.get("description", PHRASES[-1])
    return read(description) or description
