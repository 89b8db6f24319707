"""The server's own work below the training it measures: its event loop and page threads at nice +RENDER_NICE.

On a 2-core laptop the page's work (a room of viewers' reruns, their websocket traffic) and a CPU run share the
cores; the scheduler then gives niced threads about a tenth of what it gives the run's (CFS weights 110 against
1024), so the room waits, not the run (bench/room.py). Linux keeps a nice value per thread, and a thread or process
starts with its creator's: so this runs once the runner exists (its dispatcher thread, which starts every worker
process, keeps nice 0), and from then on every page thread the event loop starts is niced from birth. Only where
app.py serves the page (make run, make share): never under AppTest, whose threads would start the tests' workers.
"""

from __future__ import annotations

import os
import threading

RENDER_NICE = 10
ENABLED = False  # set by app.py: a real server, not AppTest
_done = threading.Event()


def render_below_training() -> None:
    """Once per server process: the event loop's thread and this page thread at nice RENDER_NICE (never lowered)."""
    if not ENABLED or _done.is_set() or not hasattr(os, "setpriority"):
        return
    _done.set()
    for tid in {threading.main_thread().native_id, threading.get_native_id()}:
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) < RENDER_NICE:
                os.setpriority(os.PRIO_PROCESS, tid, RENDER_NICE)
        except OSError:
            pass  # a platform without per-thread priorities: the page still works, at the run's priority
