"""One wording for progress, used by the command line, the page and the queue line.

"epoch 3 of 10" names the item in progress; "3 of 10 epochs" counts finished ones. A training run
counts epochs, a sweep counts points (a device at a batch size); `unit` says which.
"""

from __future__ import annotations

PLURALS = {"epoch": "epochs", "point": "points"}


def plural(unit: str, count: int) -> str:
    """'1 epoch', '3 epochs', '0 points'."""
    return f"{count} {unit if count == 1 else PLURALS.get(unit, unit + 's')}"


def in_progress(unit: str, done: int, total: int | None) -> str:
    """The item being worked on: 'epoch 3 of 10' after 2 finished (never past the total)."""
    if not total:
        return f"{unit} {done + 1}"
    return f"{unit} {min(done + 1, total)} of {total}"


def finished(unit: str, done: int, total: int | None) -> str:
    """How many items are finished: '3 of 10 epochs'."""
    noun = PLURALS.get(unit, unit + "s") if total != 1 else unit
    return f"{done} of {total} {noun}" if total else plural(unit, done)


def state_words(state: str, unit: str, done: int, total: int | None) -> str:
    """A job's state in a few words: 'next', 'epoch 3 of 10', 'done, 10 epochs', 'stopped after 3 of 10 epochs'."""
    if state == "queued":
        return "next"
    if state == "running":
        return in_progress(unit, done, total)
    if state == "completed":
        return f"done, {plural(unit, done)}"
    if state == "cancelled":
        return f"stopped after {finished(unit, done, total)}" if done else f"stopped before {unit} 1"
    return state  # failed, interrupted: the error sentence says why


# A job's status as the page says it: "cancelled" is the file's word, "stopped" the page's (Stop, and state_words).
STATUS_WORDS = {"cancelled": "stopped"}


def status_words(status: str) -> str:
    """'stopped' for a cancelled job, every other status as it is: one wording on every view."""
    return STATUS_WORDS.get(status, status)
