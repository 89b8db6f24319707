"""Waiting on what no condition in this process can signal: a file another process writes, a port that starts to
answer, a server's health route, a Ray actor's next poll. Everything inside one process waits on its condition
(core.runner.Runner.wait_change, threading.Condition) instead."""

from __future__ import annotations

import time
from collections.abc import Callable


def poll_until(
    ready: Callable[[], bool], timeout: float, every: float, give_up: Callable[[], bool] = lambda: False
) -> bool:
    """ready() now and then every `every` s: True once it is, False once `timeout` s have passed or give_up() is."""
    deadline = time.monotonic() + timeout
    while True:
        if ready():
            return True
        left = deadline - time.monotonic()
        if left <= 0 or give_up():
            return False
        time.sleep(min(every, left))
