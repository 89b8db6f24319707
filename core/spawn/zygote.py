"""A process that has imported TensorFlow once and forks each program from there (Linux): `python -m MODULE` starts
in milliseconds, where a fresh interpreter spent ~7 s of CPU importing TensorFlow (both cores of a small laptop).

The fork comes after TensorFlow's import and before its first op: its runtime (thread pools, devices, CUDA's
cuInit) starts in the child, as in a fresh interpreter. The zygote checks it before each fork: one thread, no runtime
started, no device listed (core.spawn.forker._unsafe); else it refuses, and that fork and every later one is a fresh
interpreter, while the children it forked run on. Not on macOS: a fork after Metal's framework has loaded
(tensorflow-metal) is not safe there. A child gets the parent's environment and working folder at the fork (or the
ones given); a zygote serves only an environment whose variables that imports read (IMPORT_ENV: TF_*, KERAS_HOME,
PYTHONPATH...) are the ones it imported under. Otherwise, or if the zygote has died, the program is a fresh
interpreter.

This is the parent's handle (`start` a program, held as a Popen is; tests/forked.py runs one to its end, as
subprocess.run does); the zygote's own side is core.spawn.forker, what they say core.spawn.messages. The zygote exits
when its parent does, and its children with it.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import sys
import threading
from collections import deque
from multiprocessing import reduction
from multiprocessing.connection import Pipe

from core.spawn.child import Child, python_m
from core.spawn.messages import Exited, Fork, Forked, Import, Kill, Refused

# What imports may read (TensorFlow, Keras, NumPy and where modules and libraries are found): a zygote serves a parent
# whose variables by these names are the ones it imported under. TF_CPP_* (C++ log levels; tf_setup sets one) aside.
IMPORT_ENV = (
    "TF_",
    "KERAS_",
    "CUDA_",
    "XLA_",
    "NVIDIA_",
    "ROCM_",
    "HIP_",
    "TPU_",
    "PYTHON",
    "LD_",
    "OMP_",
    "KMP_",
    "MKL_",
    "OPENBLAS_",
    "HOME",
    "TMPDIR",
    "PATH",
    "VIRTUAL_ENV",
)
# So that the zygote forks with one thread (core.spawn.forker._unsafe), its imports start none: NumPy's OpenBLAS pool,
# pyarrow's jemalloc purger (pandas imports it). Its children train in TensorFlow's pools, started after the fork.
ONE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
USE_ENV = "TFDASH_ZYGOTE"  # "0": every worker a fresh interpreter (to compare, or where a fork misbehaves)


def import_env(env: dict[str, str]) -> dict[str, str]:
    """The part of an environment a zygote's imports may have read."""
    return {k: v for k, v in env.items() if k.startswith(IMPORT_ENV) and not k.startswith("TF_CPP_")}


class Zygote:
    """The parent's handle on one zygote process; forks are answered in order, by a reader thread."""

    def __init__(self) -> None:
        self.modules: set[str] = set()  # imported there, or about to be (Import comes before the Fork that needs it)
        self.env = import_env(dict(os.environ))
        self.cond = threading.Condition()
        self.alive = True
        self._retired = False
        self.refused: str | None = None  # why it refused a fork: it forks no more, and this process starts fresh ones
        self._closed = False
        self._sending = threading.Lock()
        self._unanswered: deque[Child] = deque()
        self._children: dict[int, Child] = {}
        self.conn, theirs = Pipe()
        self.proc = python_m("core.spawn.forker", (), (theirs.fileno(),), {**ONE_THREAD_ENV, **os.environ})
        theirs.close()
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()

    def serves(self, env: dict[str, str] | None = None) -> bool:
        """Whether a program with this environment (this process's now, by default) may be forked here."""
        return self.alive and import_env(dict(os.environ) if env is None else env) == self.env

    def send(self, message: Kill) -> None:
        with self._sending:
            try:
                if not self._closed:
                    self.conn.send(message)
            except OSError:
                pass  # the zygote has gone, and its children with it

    def fork(self, modules: tuple[str, ...], fork: Fork, descriptors: tuple[int, ...]) -> Child:
        """A child running `fork`'s program with `descriptors` (fork.pipe's, then fork.stdio's), forked once the
        zygote has imported `modules`."""
        child = Child(self, fork, descriptors)
        with self._sending:
            with self.cond:
                self._unanswered.append(child)
            try:
                if self._closed:
                    raise OSError("the zygote has gone")
                if missing := tuple(m for m in modules if m not in self.modules):
                    self.conn.send(Import(missing))
                    self.modules.update(missing)
                self.conn.send(fork)
                for fd in descriptors:
                    reduction.send_handle(self.conn, fd, self.proc.pid)
            except OSError:
                self._gone()
        return child

    def retire(self) -> None:
        """Fork no more; the zygote exits once its last child has (now, if it has none)."""
        with self.cond:
            self.alive, self._retired = False, True
            idle = not self._unanswered and not self._children
        if idle:
            with self._sending:
                if not self._closed:  # EOF for both ends; the reader closes the descriptor (never another thread)
                    with socket.fromfd(self.conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as both:
                        both.shutdown(socket.SHUT_RDWR)

    def _read(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError, pickle.UnpicklingError):
                self._gone()
                self._close()
                return
            kill = None
            with self.cond:
                if isinstance(message, Forked):
                    child = self._unanswered.popleft()
                    child._pid = message.pid
                    child._release()
                    self._children[message.pid] = child
                    kill = message.pid if child._killed else None
                elif isinstance(message, Refused):
                    self._refuse(message.reason)
                elif isinstance(message, Exited) and (child := self._children.pop(message.pid, None)):
                    child._code = message.code
                self.cond.notify_all()
                done = self._retired and not self._unanswered and not self._children
            if kill:
                self.send(Kill(kill))  # killed before the zygote had said its pid
            if done:
                self._close()  # a retired zygote's last child has ended: it exits
                return

    def _refuse(self, reason: str) -> None:
        """Under the lock: the oldest fork starts as a fresh interpreter; the zygote exits after its last child."""
        if self.refused is None:
            logging.getLogger(__name__).warning(
                "No more forks from the zygote: %s. Fresh interpreters instead.", reason
            )
        self.refused, self.alive, self._retired = reason, False, True
        child = self._unanswered.popleft()
        child._start_fresh()
        child._release()

    def _close(self) -> None:
        """Only the reader closes the connection: a descriptor closed under a thread reading it may be reused."""
        with self._sending:
            self._closed = True
            self.conn.close()

    def _gone(self) -> None:
        """The zygote has died: its children were killed with it (their parent-death signal); none more forks."""
        with self.cond:
            self.alive = False
            for child in [*self._unanswered, *self._children.values()]:
                child._release()
                if child._code is None:
                    child._code = -signal.SIGKILL
            self._unanswered.clear()
            self._children.clear()
            self.cond.notify_all()


_lock = threading.Lock()
_zygote: Zygote | None = None  # the one forking now; one it replaced lives on while it has children


def available() -> bool:
    """Whether programs may be forked on this machine (Linux, not turned off by TFDASH_ZYGOTE=0)."""
    return sys.platform.startswith("linux") and os.environ.get(USE_ENV, "").strip() != "0"


def serving(env: dict[str, str] | None) -> Zygote | None:
    """This process's zygote, if it serves `env`. For this process's own import environment (env None, or one that
    imports read the same) one is started, and started again when it has changed (the one before ends with its
    children); for another, only one already serving it. None: a fresh interpreter (no zygote serves it, or the one
    that did refused a fork)."""
    global _zygote
    with _lock:
        if env is not None and import_env(env) != import_env(dict(os.environ)):
            return _zygote if _zygote is not None and _zygote.serves(env) else None
        if _zygote is not None and _zygote.refused and _zygote.env == import_env(dict(os.environ)):
            return None  # it stays refused for this environment: fresh interpreters, its children running on
        if _zygote is None or not _zygote.serves():
            if _zygote is not None:
                _zygote.retire()
            _zygote = Zygote()
        return _zygote


def start(preload: tuple[str, ...], module: str, args: tuple[str, ...], pipe: int) -> Child | None:
    """`python -m module *args FD` forked from this process's zygote once it has imported `preload`, FD being its end
    of `pipe` (a descriptor of this process); with this process's environment and folder now. None: start a fresh
    interpreter instead (no preload, not available here)."""
    if not preload or not available():
        return None
    zygote = serving(None)
    if zygote is None:
        return None
    return zygote.fork(preload, Fork(module, args, dict(os.environ), os.getcwd(), pipe=True), (pipe,))
