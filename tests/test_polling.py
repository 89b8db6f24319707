"""core.polling: the one wait on what no condition in this process signals (another process's file, a port)."""

import os
import threading
import time

from core.polling import poll_until


def test_it_returns_once_another_thread_makes_it_ready_and_gives_up_when_told_or_at_its_timeout(tmp_path):
    target = tmp_path / "written"
    threading.Timer(0.3, target.write_text, ("done",)).start()
    began = time.monotonic()
    assert poll_until(lambda: os.path.exists(target), 30, 0.05)
    assert 0.25 < time.monotonic() - began < 10  # it waited, then saw the file well before its timeout
    began = time.monotonic()
    assert not poll_until(lambda: False, 30, 0.05, give_up=lambda: time.monotonic() - began > 0.2)
    assert time.monotonic() - began < 10
    assert not poll_until(lambda: False, 0.2, 0.05)
    assert poll_until(lambda: True, 0, 1)  # ready at once: no wait, even with no time at all
