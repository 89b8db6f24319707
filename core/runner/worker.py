"""The training worker: a process of its own that has TensorFlow imported before it is needed, runs its job, exits.

Why a process: TensorFlow never gives memory back to the operating system, so a server that trained
in its own process only ever grew (CNN batch 32768 twice: 3.6 -> 16.4 GB). A worker that exits
after each job returns all of it (a Runner's worker_jobs may give it a few more jobs first); the next
worker starts at once and warms up while nobody waits, so the first Run after the server starts is as
quick as later ones. On Linux it is forked from a zygote that imported TensorFlow once (core.spawn.zygote:
milliseconds, not ~7 s of CPU); elsewhere it is a fresh interpreter.

Why not multiprocessing's "spawn" context: it re-runs the parent's __main__ in the child, and under
Streamlit __main__ is the app script (its script runner installs it there), so every worker would
run the whole page and start a Runner of its own. `python -m core.runner.serve FD` (and the zygote, `python -m
core.spawn.forker FD`) is the same fresh interpreter that spawn gives, talking over multiprocessing's own
Connection (a socketpair, pickled messages: core.runner.protocol). This is the parent's handle; the
parent's side of a job is core.runner.turns (one job is a group of one), the worker's core.runner.serve.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from multiprocessing.connection import Pipe

from core.runner import end_messages
from core.runner.protocol import Done, Exit, Go, Hello, Item, Ready, Start, Stop, WantsTurn
from core.spawn import zygote

# How often the parent looks for a stop request while it waits for the worker's next message.
POLL_SECONDS = 0.05


class Worker:
    """The parent's handle on one worker process, started (and warming up) as soon as it is made."""

    def __init__(self, warm_ups: Iterable[Callable[[], None]], jobs: int = 1, preload: tuple[str, ...] = ()) -> None:
        """Start it: forked from this process's zygote where one may import `preload` first (core.spawn.zygote),
        else a fresh interpreter."""
        self.jobs_left = jobs  # the jobs it may still run before it exits (core.runner.pool.Pool.give_back)
        self.conn, child = Pipe()
        forked = zygote.start(preload, "core.runner.serve", (), child.fileno())
        self.proc: subprocess.Popen | zygote.Child = forked or zygote.python_m(
            "core.runner.serve", (), (child.fileno(),)
        )
        child.close()
        self.ready = False
        self._ready_lock = threading.Lock()  # the dispatcher and Runner.warm() may both wait for Ready
        # The parent's path first, so the worker imports job functions from the modules the parent has.
        self.conn.send(Hello(list(sys.path), list(dict.fromkeys(warm_ups)), os.getpid()))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the worker has imported everything (True), or it died or timed out (False)."""
        with self._ready_lock:
            if not self.ready:
                try:
                    if self.conn.poll(timeout):
                        self.ready = isinstance(self.conn.recv(), Ready)
                except (EOFError, OSError):
                    return False
            return self.ready

    def poll_ready(self) -> bool:
        """Whether the worker has said it is ready, without waiting (False while another thread waits for it)."""
        if self.ready or not self._ready_lock.acquire(blocking=False):
            return self.ready
        try:
            if self.conn.poll(0):
                self.ready = isinstance(self.conn.recv(), Ready)
        except (EOFError, OSError):
            pass  # died starting up: not ready
        finally:
            self._ready_lock.release()
        return self.ready

    def send(self, message: Start | Go) -> None:
        """Hand the worker a job, or its turn (raises OSError if it has died)."""
        if isinstance(message, Start):
            self.jobs_left -= 1
        self.conn.send(message)

    def stop(self) -> None:
        """Ask the job to stop at its next check (should_stop() turns True)."""
        try:
            self.conn.send(Stop())
        except OSError:
            pass  # already gone: nothing left to stop

    def receive(self, timeout: float) -> Item | WantsTurn | Done | None:
        """The worker's next message, None if none came within timeout; EOFError if the worker has died."""
        try:
            return self.conn.recv() if self.conn.poll(timeout) else None
        except OSError as err:
            raise EOFError(str(err)) from None

    def kill(self) -> None:
        """End the worker now (SIGKILL): a step in progress cannot be interrupted any other way."""
        if self.proc.poll() is None:
            self.proc.kill()

    def close(self, timeout: float = 10.0) -> None:
        """Let an idle or finished worker exit (killing it after timeout) and reap it."""
        try:
            self.conn.send(Exit())
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.conn.close()

    def how_it_ended(self) -> str:
        """'The worker process (pid N) was killed (SIGKILL, ...)', for the sentence of a job it left unfinished."""
        try:
            code = self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            return end_messages.SILENT.format(pid=self.pid)
        if code < 0:
            killed = end_messages.KILLED_OOM if -code == signal.SIGKILL else end_messages.KILLED
            return killed.format(pid=self.pid, signal=signal.Signals(-code).name)
        return end_messages.EXITED.format(pid=self.pid, code=code)
