"""A viewer's page below the training it watches: its page threads at nice +RENDER_NICE; the presenter's at 0.

On a 2-core laptop a room of viewers' reruns and a CPU run share the cores; the scheduler gives a niced thread
about a tenth of what it gives the run's (CFS weights 110 against 1024), so the room waits, not the run
(bench/room.py). The presenter's page keeps the run's priority: it must answer Run and Stop at once, and it is one
page. Linux keeps a nice value per thread and a new thread or process starts with its creator's, which is why only
the page thread running a viewer's script is niced, at the start of each of its runs (a whole page: ui.resources;
a live fragment: ui.watcher), never the event loop (it starts every page thread) nor the runner's threads (they
start the worker processes). Only where app.py serves the page: never under AppTest.
"""

from __future__ import annotations

import os
import threading

RENDER_NICE = 10
ENABLED = False  # set by app.py: a real server, not AppTest


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
