"""A viewer's page below the training it watches: its page threads at nice +RENDER_NICE; the presenter's at 0.

On a 2-core laptop a room of viewers' reruns and a CPU run share the cores; the scheduler gives a niced thread
about a tenth of what it gives the run's (CFS weights 110 against 1024), so the room waits, not the run
(bench/room.py). The presenter's page keeps the run's priority: it must answer Run and Stop at once, and it is one
page. Linux keeps a nice value per thread and a new thread or process starts with its creator's, which is why only
the page thread running a viewer's script is niced, at the start of each of its runs (a whole page: ui.resources;
a live fragment: ui.watcher), never the event loop (it starts every page thread) nor the runner's threads (they
start the worker processes). Only where app.py serves the page: never under AppTest.

Niceness alone does not bound a room: a niced page thread that holds the GIL while it waits for a core makes the
presenter's wait too. So the room's work is bounded as well: a room of more than ROOM_FREE viewers' pages ticks and
redraws each page proportionally less often (stretch()), so the room's reruns per second stay those of ROOM_FREE.
"""

from __future__ import annotations

import os
import threading
import time

RENDER_NICE = 10
ENABLED = False  # set by app.py: a real server, not AppTest
ROOM_FREE = 5  # viewers' pages at the full cadence; more stretch it (bench/room.py: 30 viewers then cost a run 0-3%)
GONE_S = 30.0  # a viewer's page not seen for this long has left (its slowest cadence, stretched, is well under it)

_viewers: dict[str, float] = {}  # viewer page (session id) -> when it last ran (time.monotonic())
_viewers_lock = threading.Lock()


def seen(session: str | None, viewer: bool, now: float | None = None) -> None:
    """Count the page `session` in the room while it keeps running (a viewer's), or out of it (a presenter's)."""
    if session is None:
        return
    now = time.monotonic() if now is None else now
    with _viewers_lock:
        if viewer:
            _viewers[session] = now
        else:
            _viewers.pop(session, None)
        for gone in [s for s, at in _viewers.items() if now - at > GONE_S]:
            del _viewers[gone]


def viewers(now: float | None = None) -> int:
    """Viewers' pages seen within GONE_S."""
    now = time.monotonic() if now is None else now
    with _viewers_lock:
        return sum(now - at <= GONE_S for at in _viewers.values())


def stretch(now: float | None = None) -> float:
    """How much less often each viewer's page ticks and redraws: 1 up to ROOM_FREE viewers, then viewers/ROOM_FREE."""
    return max(1.0, viewers(now) / ROOM_FREE)


def viewer_page(viewer: bool) -> None:
    """This page thread at nice RENDER_NICE when it runs a viewer's page (a nice value is never lowered)."""
    if not (ENABLED and viewer and hasattr(os, "setpriority")):
        return
    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < RENDER_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, RENDER_NICE)
    except OSError:
        pass  # a platform without per-thread priorities: the page still works, at the run's priority
