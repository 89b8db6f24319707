"""One wording for progress, used by the command line, the page and the queue line.

"epoch 3 of 10" names the item in progress; "3 of 10 epochs" counts finished ones. A training run
counts epochs, a sweep counts points (a device at a batch size); `unit` says which. Each wording is a whole
sentence per unit (core.language.i18n translates it; the command line stays English).
"""

from __future__ import annotations

from core.language.i18n import N_, _, ngettext
from core.results.states import State

PLURALS = {"epoch": "epochs", "point": "points"}
# Per unit: (one, many) of a count, the item in progress (of a total, and without), "stopped before/during the first"
COUNTS = {
    "epoch": lambda n: ngettext("{n} epoch", "{n} epochs", n),
    "point": lambda n: ngettext("{n} point", "{n} points", n),
}
OF_TOTAL = {
    "epoch": lambda n: ngettext("{done} of {total} epoch", "{done} of {total} epochs", n),
    "point": lambda n: ngettext("{done} of {total} point", "{done} of {total} points", n),
}
IN_PROGRESS = {
    "epoch": (N_("epoch {n}"), N_("epoch {n} of {total}")),
    "point": (N_("point {n}"), N_("point {n} of {total}")),
}
BEFORE_FIRST = {"epoch": N_("stopped before epoch 1"), "point": N_("stopped before point 1")}
DURING_FIRST = {"epoch": N_("stopped during epoch 1"), "point": N_("stopped during point 1")}


def plural(unit: str, count: int) -> str:
    """'1 epoch', '3 epochs', '0 points'."""
    if unit not in COUNTS:
        return f"{count} {unit if count == 1 else PLURALS.get(unit, unit + 's')}"
    return COUNTS[unit](count).format(n=count)


def in_progress(unit: str, done: int, total: int | None) -> str:
    """The item being worked on: 'epoch 3 of 10' after 2 finished (never past the total)."""
    if unit not in IN_PROGRESS:
        return f"{unit} {done + 1}" if not total else f"{unit} {min(done + 1, total)} of {total}"
    if not total:
        return _(IN_PROGRESS[unit][0]).format(n=done + 1)
    return _(IN_PROGRESS[unit][1]).format(n=min(done + 1, total), total=total)


def finished(unit: str, done: int, total: int | None) -> str:
    """How many items are finished: '3 of 10 epochs'."""
    if not total:
        return plural(unit, done)
    if unit not in OF_TOTAL:
        return f"{done} of {total} {PLURALS.get(unit, unit + 's') if total != 1 else unit}"
    return OF_TOTAL[unit](total).format(done=done, total=total)


def state_words(state: str, unit: str, done: int, total: int | None, began: bool = False) -> str:
    """A job's state in a few words: 'next', 'epoch 3 of 10', 'done, 10 epochs', 'stopped after 3 of 10 epochs'.
    `began`: its first item had started (a stop then came during it, not before it)."""
    if state == State.QUEUED:
        return _("next")
    if state == State.RUNNING:
        return in_progress(unit, done, total)
    if state == State.COMPLETED:
        return _("done, {count}").format(count=plural(unit, done))
    if state == State.CANCELLED:
        if done:
            return _("stopped after {count}").format(count=finished(unit, done, total))
        first = DURING_FIRST if began else BEFORE_FIRST
        return _(first[unit]) if unit in first else f"stopped {'during' if began else 'before'} {unit} 1"
    return status_words(state)  # failed, interrupted: the error sentence says why


# A job's status as the page says it: "cancelled" is the file's word, "stopped" the page's (Stop, and state_words).
STATUS_WORDS = {
    State.CANCELLED: N_("stopped"),
    State.COMPLETED: N_("completed"),
    State.FAILED: N_("failed"),
    State.INTERRUPTED: N_("interrupted"),
    State.RUNNING: N_("running"),
    State.QUEUED: N_("queued"),
}


def status_words(status: str) -> str:
    """'stopped' for a cancelled job, every other status as it is: one wording on every view."""
    return _(STATUS_WORDS[status]) if status in STATUS_WORDS else status
