"""The training worker: a fresh Python process that imports TensorFlow before it is needed, runs one job, exits.

Why a process: TensorFlow never gives memory back to the operating system, so a server that trained
in its own process only ever grew (CNN batch 32768 twice: 3.6 -> 16.4 GB). A worker that exits
after each job returns all of it; the next worker starts at once and imports TensorFlow while
nobody waits, so the first Run after the server starts is as quick as later ones.

Why not multiprocessing's "spawn" context: it re-runs the parent's __main__ in the child, and under
Streamlit __main__ is the app script (its script runner installs it there), so every worker would
run the whole page and start a Runner of its own. `python -m core.runner.worker FD` is the same fresh
interpreter that spawn gives (never a fork after TensorFlow), talking over multiprocessing's own
Connection (a socketpair, pickled messages). Job functions and configs cross it by reference, so
a job kind must be a module-level function.

Messages, parent -> worker: ("path", sys.path), ("kinds", [job functions]), then ("job", function,
config, run_id, turns) or ("exit",), and ("stop",) at any time during the job; with turns, ("go",) grants a turn.
Worker -> parent: ("ready", pid), then ("item", item, result so far) per epoch or point, then
("done", result, state, error text); with turns, ("turn",) before each part of the job that must run alone.

Turns (core.runner.turns): the runs of one comparison run side by side in workers of their own and take turns, so
each is timed while the other waits (idle, blocked on a pipe), minutes of a machine's drift hitting both alike.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# A step cannot be interrupted (CNN batch 32768: ~12 s a step): a job that has not stopped this
# many seconds after being asked is ended with its worker; its finished epochs are already home.
STOP_GRACE_SECONDS = 1.5
# How often the parent looks for a stop request while it waits for the worker's next message.
POLL_SECONDS = 0.05


class Worker:
    """The parent's handle on one worker process, started (and warming up) as soon as it is made."""

    def __init__(self, kinds: Iterable[Callable[..., Any]]) -> None:
        self.conn, child = Pipe()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "core.runner.worker", str(child.fileno())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
        )
        child.close()
        self.ready = False
        self._ready_lock = threading.Lock()  # the dispatcher and Runner.warm() may both wait for "ready"
        self.pid = self.proc.pid
        # The parent's path first, so the worker imports job functions from the modules the parent has.
        self.conn.send(("path", list(sys.path)))
        self.conn.send(("kinds", list(kinds)))

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the worker has imported everything (True), or it died or timed out (False)."""
        with self._ready_lock:
            if not self.ready:
                try:
                    if self.conn.poll(timeout):
                        self.ready = self.conn.recv()[0] == "ready"
                except (EOFError, OSError):
                    return False
            return self.ready

    def poll_ready(self) -> bool:
        """Whether the worker has said it is ready, without waiting (False while another thread waits for it)."""
        if self.ready or not self._ready_lock.acquire(blocking=False):
            return self.ready
        try:
            if self.conn.poll(0):
                self.ready = self.conn.recv()[0] == "ready"
        except (EOFError, OSError):
            pass  # died starting up: not ready
        finally:
            self._ready_lock.release()
        return self.ready

    def start(self, job: Callable[..., Any], config: Any, run_id: str, turns: bool = False) -> None:
        """Hand the worker its one job (raises OSError if it has died); with turns, it waits for go() at each turn."""
        self.conn.send(("job", job, config, run_id, turns))

    def go(self) -> None:
        """Grant the worker its turn: it has sent ("turn",) and waits for this."""
        self.conn.send(("go",))

    def run(self, job: Callable[..., Any], config: Any, run_id: str, stop: threading.Event, on_item) -> tuple:
        """Run one job here, calling on_item(item, result) per message: ("done", result, state, error text), or
        ("stopped",) when it outlasted STOP_GRACE_SECONDS after `stop` was set (then ended), or ("died",)."""
        stop_asked: float | None = None
        try:
            self.start(job, config, run_id)
            while True:
                if stop.is_set() and stop_asked is None:
                    self.stop()
                    stop_asked = time.monotonic()
                if stop_asked is not None and time.monotonic() - stop_asked > STOP_GRACE_SECONDS:
                    self.kill()
                    return ("stopped",)
                message = self.receive(POLL_SECONDS)
                if message is None:
                    continue
                if message[0] == "item":
                    on_item(message[1], message[2])
                elif message[0] == "done":
                    return message
        except (EOFError, OSError):
            return ("died",)

    def stop(self) -> None:
        """Ask the job to stop at its next check (should_stop() turns True)."""
        try:
            self.conn.send(("stop",))
        except OSError:
            pass  # already gone: nothing left to stop

    def receive(self, timeout: float) -> tuple | None:
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
            self.conn.send(("exit",))
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.conn.close()

    def how_it_ended(self) -> str:
        """'was killed (SIGKILL, ...)' or 'exited with code 1', for the sentence of a job it left unfinished."""
        try:
            code = self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            name = signal.Signals(-code).name
            why = ", often the system running out of memory" if -code == signal.SIGKILL else ""
            return f"was killed ({name}{why})"
        return f"exited with code {code}"


# -- the worker's side -----------------------------------------------------------------------


def _serve(conn: Connection) -> None:
    kind, path = conn.recv()
    sys.path[:0] = [p for p in path if p not in sys.path]
    kind, kinds = conn.recv()
    # A job kind may say how to get ready (core.engine.kinds: import TensorFlow and Keras), so the
    # seconds that costs pass while the worker waits, not after someone pressed Run.
    for warm_up in dict.fromkeys(getattr(k, "warm_up", None) for k in kinds):
        if warm_up is not None:
            warm_up()
    conn.send(("ready", os.getpid()))
    message = conn.recv()
    if message[0] != "job":
        return
    _, job, config, run_id, turns = message
    stop, go = threading.Event(), threading.Event()

    def listen() -> None:
        while True:
            try:
                said = conn.recv()[0]
            except (EOFError, OSError):
                os._exit(1)  # the parent has gone: nobody will ever read this job's result
            if said == "stop":
                stop.set()
                go.set()  # a job waiting for its turn wakes, to stop
            elif said == "go":
                go.set()

    threading.Thread(target=listen, name="stop-listener", daemon=True).start()

    sending = threading.Lock()  # model.fit's stop checks (which send an epoch's progress) run on Keras' threads

    def on_item(item: Any, result: Any) -> None:
        with sending:
            conn.send(("item", item, result))

    def take_turn() -> None:
        """Block until the parent says go (or stop): the job's next part then runs while the others wait."""
        go.clear()
        if stop.is_set():
            return
        with sending:
            conn.send(("turn",))
        go.wait()

    error_text = None
    try:
        result = job(config, on_item, stop.is_set, run_id, **({"take_turn": take_turn} if turns else {}))
        state = getattr(result, "status", "completed")
    except Exception as err:  # noqa: BLE001 - job functions should not raise; say it rather than die
        result, state, error_text = None, "failed", f"{type(err).__name__}: {err}"
    conn.send(("done", result, state, error_text))


def main(fd: int) -> None:
    """The worker process: get ready, run at most one job, exit."""
    conn = Connection(fd)
    try:
        _serve(conn)
    except (EOFError, OSError):
        pass  # the parent closed the connection (it exited, or closed the Runner): nothing to do
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # os._exit: TensorFlow's threads can make a normal interpreter exit hang or crash at teardown.
        os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]))
