"""The zygote process's own side (`python -m core.spawn.forker FD`): import the modules it is sent, fork a child
running `python -m MODULE ARGS` on each Fork and say how each ended, until the parent goes.

Its parent holds it as a core.spawn.zygote.Zygote; what they say is core.spawn.messages (Import, Fork with the
child's descriptors passed after it, and Kill; Forked and Exited back). A module of its own, so `python -m` runs it
without the package having imported it first (its messages would be classes of __main__).
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import sys
import traceback
from multiprocessing import reduction
from multiprocessing.connection import Connection, wait

from core.spawn.messages import Exited, Fork, Forked, Import, Kill, Refused

_PR_SET_PDEATHSIG = 1


def _import(modules: tuple[str, ...]) -> None:
    """The modules, quietly (as core.engine.tf_setup imports TensorFlow), running no op."""
    import importlib

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    saved = os.dup(2)
    with open(os.devnull, "wb") as sink:
        os.dup2(sink.fileno(), 2)  # C++ start-up chatter (oneDNN, CUDA probing), as tf_setup hides it
        try:
            for name in modules:
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 - the child imports it again and its job says what failed
                    pass
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _unsafe() -> str | None:
    """Why a fork from here would not be safe now, or None. Only the forking thread exists in a child, so a lock or
    pool another thread held (OpenBLAS's, jemalloc's, CUDA's) is broken there; and after TensorFlow's runtime has
    started or listed its devices (cuInit), no child can use the GPU."""
    threads = os.listdir("/proc/self/task")
    if len(threads) > 1:
        names = sorted(_thread_name(t) for t in threads if int(t) != os.getpid())  # it forks on its main thread
        return f"it runs {len(threads)} threads ({', '.join(names)})"
    context = sys.modules.get("tensorflow.python.eager.context")
    started = context.context_safe() if context else None
    if started is not None and (started._initialized or started._physical_devices is not None):
        return "TensorFlow's runtime has started or listed its devices"
    return None


def _thread_name(tid: str) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm") as comm:
            return comm.read().strip()
    except FileNotFoundError:
        return "ended"


def _child(conn: Connection, wakes: tuple[int, int], handles: list[int], fork: Fork, zygote_pid: int) -> None:
    """In the forked child: die with the zygote, take the descriptors, environment and folder it was given, run the
    program as `python -m` would, exit with its code."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote_pid:
        os._exit(1)  # the zygote died before the line above
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in wakes:
        os.close(fd)
    conn.close()
    args = list(fork.args)
    if fork.pipe:
        args.append(str(handles.pop(0)))  # kept at the number it was received as: free in this process
    if fork.stdio:
        for target, handle in enumerate(handles):
            os.dup2(handle, target)
        for handle in handles:
            if handle > 2:
                os.close(handle)
    os.environ.clear()
    os.environ.update(fork.env)
    os.chdir(fork.cwd)
    sys.path[0] = os.getcwd()  # as `python -m` begins its path: with the folder it runs in
    sys.argv = [fork.module, *args]
    code = 0
    try:
        runpy.run_module(fork.module, run_name="__main__", alter_sys=True)
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
        if not isinstance(end.code, (int, type(None))):
            print(end.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as the interpreter does: the traceback on stderr, code 1
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)  # TensorFlow's threads can make a normal interpreter exit hang (as core.runner.serve ends)


def _reap(conn: Connection, live: set[int]) -> None:
    """Say how every child that has ended ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        live.discard(pid)
        conn.send(Exited(pid, os.waitstatus_to_exitcode(status)))


def main(fd: int) -> None:
    """The zygote: import, then fork on each Fork until the parent goes."""
    conn = Connection(fd)
    try:
        wake, woken = os.pipe()
        os.set_blocking(woken, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(woken, warn_on_full_buffer=False)
        live: set[int] = set()  # forked, not yet reaped: the only pids a Kill may reach
        me = os.getpid()
        refused: str | None = None  # once unsafe, always: a thread that started may be idle at the next check
        while True:
            for ready in wait([conn, wake]):
                if ready is wake:
                    os.read(wake, 512)
                    _reap(conn, live)
                    continue
                message = conn.recv()
                if isinstance(message, Fork):
                    handles = [reduction.recv_handle(conn) for _ in range(message.descriptors)]
                    refused = refused or _unsafe()
                    if refused:
                        for handle in handles:
                            os.close(handle)
                        conn.send(Refused(refused))  # the parent starts a fresh interpreter; ours run on
                        continue
                    for stream in (sys.stdout, sys.stderr):
                        stream.flush()  # nothing of the zygote's own written twice
                    pid = os.fork()
                    if pid == 0:
                        _child(conn, (wake, woken), handles, message, me)
                    for handle in handles:
                        os.close(handle)
                    live.add(pid)
                    conn.send(Forked(pid))
                elif isinstance(message, Import):
                    _import(message.modules)
                elif isinstance(message, Kill) and message.pid in live:
                    os.kill(message.pid, signal.SIGKILL)  # not reaped yet (_reap runs on this thread): still ours
            _reap(conn, live)
    except (EOFError, OSError):
        pass  # the parent has gone
    finally:
        os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]))
