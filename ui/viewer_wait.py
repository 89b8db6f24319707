"""A viewer's tick waits on the runner's change condition, never a sleep: for its stretched interval (a large room's
pages draw less often) and for a run asked to stop, so every page says "stopping" and "stopped" within a moment."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check

from core.runner import JobStatus, Runner
from ui import live


class Shown(Protocol):
    """What a wait reads of the page's jobs (ui.watcher.JobsNow): each kind's jobs as shown."""

    @property
    def shown(self) -> Mapping[str, tuple[JobStatus, ...]]: ...


JobsNow = TypeVar("JobsNow", bound=Shown)

STOP_WAIT_S = 1.5  # a viewer's tick that finds a run asked to stop waits this long for it to end (past_a_stop)
HOLD_SLICE_S = 0.5  # a viewer's tick holding for a change (hold) looks this often for a click on its own page


def hold(runner: Runner, moment: int, deadline: float) -> None:
    """Wait, up to `deadline` (the tick's last one and its stretched interval), until a job is queued, started, asked
    to stop or settled since `moment`, the runner's when the page last drew: then the tick draws at once. So every page
    in a room says "stopping" and "stopped" within a moment of the click, however far apart its ticks are, and between
    changes a room of pages costs a tick per stretched interval each: the browser's next auto-rerun, sent meanwhile,
    waits behind this one (Streamlit folds them into one). The browser asks at the unstretched interval, so a page
    whose last run drew it whole holds again within that. The wait wakes every HOLD_SLICE_S to let a click on this page
    (a whole rerun) or its closing end it."""
    # A private import: no public API lets a waiting script see its own rerun or Stop (read in 1.67, pinned).
    check = get_run_yield_check() or (lambda: None)
    while (left := deadline - time.monotonic()) > 0:
        if runner.wait_change(moment, min(left, HOLD_SLICE_S)) != moment:
            return
        check()  # raises Streamlit's own rerun or stop of this run


def past_a_stop(snap: JobsNow, read: Callable[[], JobsNow], runner: Runner, moment: int) -> JobsNow:
    """The page's jobs once a run asked to stop has ended, read() again each time the runner changes, for up to
    STOP_WAIT_S: not a whole tick more, so every page says "stopped" soon after the click (bench/room.py:
    stop_seen_s)."""
    deadline = time.monotonic() + STOP_WAIT_S
    while _stopping(snap) and (left := deadline - time.monotonic()) > 0:
        moment = runner.wait_change(moment, left)  # the runner's moment moves when the run settles
        snap = read()
    return snap


def _stopping(snap: JobsNow) -> bool:
    return any(s.stopped_by and s.state in live.ACTIVE for jobs in snap.shown.values() for s in jobs)
