"""The worker process's own side (`python -m core.runner.serve FD`): warm up, say Ready, run the jobs the parent gives
(one unless it gives the worker back), exit.

Its parent holds it as a core.runner.worker.Worker; what they say is core.runner.protocol. A module of its own, so
`python -m` runs it without the package having imported it first.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from core.results.states import State
from core.runner.deltas import head
from core.runner.protocol import Done, Go, Hello, Item, Ready, Start, Stop, WantsTurn


def _serve(conn: Connection) -> None:
    hello: Hello = conn.recv()
    sys.path[:0] = [p for p in hello.path if p not in sys.path]
    if hello.parent_pid:  # core.engine.load: the runner's process is the dashboard's, not "the rest of the machine"
        os.environ["TFDASH_SERVER_PID"] = str(hello.parent_pid)
    # The seconds a warm-up costs (core.engine.kinds: import TensorFlow and Keras) pass while the worker waits,
    # not after someone pressed Run.
    for warm_up in hello.warm_ups:
        warm_up()
    conn.send(Ready(os.getpid()))
    starts: queue.Queue[tuple[Start, _Heard] | None] = queue.Queue()
    threading.Thread(target=_listen, args=(conn, starts), name="stop-listener", daemon=True).start()
    # One job, or more where the parent gives the worker back for the next (core.runner.pool: worker_jobs).
    while (given := starts.get()) is not None:
        _run(conn, *given)


@dataclass
class _Heard:
    """What the parent said during one job: Stop, and Go for its next turn."""

    stop: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)


def _run(conn: Connection, start: Start, heard: _Heard) -> None:
    """One job, its items and its end sent to the parent."""
    sending = threading.Lock()  # model.fit's stop checks (which send an epoch's progress) run on Keras' threads

    def on_item(item: Any, result: Any) -> None:
        with sending:
            conn.send(Item(item, head(result)))  # sent once: the parent's run grows by the item

    def take_turn() -> None:
        """Block until the parent says Go (or Stop): the job's next part then runs while the others wait."""
        heard.go.clear()
        if heard.stop.is_set():
            return
        with sending:
            conn.send(WantsTurn())
        heard.go.wait()

    turns = {"take_turn": take_turn} if start.turns else {}
    try:
        result = start.job(start.config, on_item, heard.stop.is_set, start.run_id, **turns)
        done = Done(result, getattr(result, "status", State.COMPLETED))
    except Exception as err:  # noqa: BLE001 - job functions should not raise; say it rather than die
        done = Done(None, State.FAILED, f"{type(err).__name__}: {err}")
    conn.send(done)


def _listen(conn: Connection, starts: queue.Queue) -> None:
    """Everything the parent says after Ready: each Start (with its job's own Stop and Go), Exit, Stop and Go."""
    heard = _Heard()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            os._exit(1)  # the parent has gone: nobody will ever read this job's result
        if isinstance(message, Start):
            heard = _Heard()  # a Stop meant for the job before never reaches this one
            starts.put((message, heard))
        elif isinstance(message, Stop):
            heard.stop.set()
            heard.go.set()  # a job waiting for its turn wakes, to stop
        elif isinstance(message, Go):
            heard.go.set()
        else:  # Exit
            starts.put(None)
            return


def main(fd: int) -> None:
    """The worker process: get ready, run its jobs, exit."""
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
