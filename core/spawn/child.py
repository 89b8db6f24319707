"""A program the zygote forked, held as a subprocess.Popen is; or, where it refused the fork, the fresh interpreter
that runs the program instead (core.spawn.zygote's parent side, core.spawn.forker's refusal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Protocol

from core.spawn.messages import Fork, Kill


class Zygote(Protocol):
    """What a child needs of its zygote (core.spawn.zygote.Zygote): its lock and a way to send it a Kill."""

    cond: threading.Condition

    def send(self, message: Kill) -> None: ...


ROOT = Path(__file__).resolve().parents[2]


def fresh_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """An environment (this process's by default) for a fresh interpreter of the project: the project importable."""
    env = dict(os.environ if env is None else env)
    return dict(env, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))


def python_m(
    module: str, args: tuple[str, ...], fds: tuple[int, ...], env: dict[str, str] | None = None, **popen
) -> subprocess.Popen:
    """`python -m module *args *fds` as a fresh interpreter of the project (fresh_env(env)), handed the descriptors
    `fds`; stdin is /dev/null unless `popen` says otherwise."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    argv = [sys.executable, "-m", module, *args, *map(str, fds)]
    return subprocess.Popen(argv, pass_fds=fds, env=fresh_env(env), **popen)


class Child:
    """A program forked by the zygote, held as a subprocess.Popen is: pid, poll(), wait(timeout), kill(). Where the
    zygote refused the fork (core.spawn.forker._unsafe), a fresh interpreter runs the program instead, held the same."""

    def __init__(self, zygote: Zygote, fork: Fork, descriptors: tuple[int, ...]) -> None:
        self._zygote = zygote
        self._fork = fork
        self._kept = tuple(os.dup(fd) for fd in descriptors)  # until answered: a refused fork starts fresh with them
        self._pid: int | None = None
        self._fresh: subprocess.Popen | None = None
        self._code: int | None = None
        self._killed = False

    @property
    def returncode(self) -> int | None:
        return self._fresh.returncode if self._fresh else self._code

    def _answered(self) -> bool:
        return self._pid is not None or self._fresh is not None or self._code is not None

    @property
    def pid(self) -> int:
        """The child's pid, once the zygote has forked it or refused to (0 if it never started)."""
        with self._zygote.cond:
            self._zygote.cond.wait_for(self._answered)
            return self._fresh.pid if self._fresh else (self._pid or 0)

    def poll(self) -> int | None:
        return self._fresh.poll() if self._fresh else self._code

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._zygote.cond:
            ended = self._zygote.cond.wait_for(lambda: self._code is not None or self._fresh is not None, timeout)
        if self._fresh is not None:
            return self._fresh.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if not ended:
            raise subprocess.TimeoutExpired("a forked program", timeout or 0)
        return self._code  # type: ignore[return-value]

    def kill(self) -> None:
        with self._zygote.cond:
            self._killed = True
            pid = self._pid if self._code is None else None
            fresh = self._fresh
        if fresh:
            fresh.kill()
        elif pid:
            self._zygote.send(Kill(pid))

    def _start_fresh(self) -> None:
        """Under the zygote's lock: `python -m` the program as a fresh interpreter, on the descriptors it was given."""
        fork, kept, pipe = self._fork, self._kept, int(self._fork.pipe)
        if self._killed:
            self._code = -signal.SIGKILL
            return
        stdio = dict(zip(("stdin", "stdout", "stderr"), kept[pipe:], strict=True)) if fork.stdio else {}
        try:
            self._fresh = python_m(fork.module, fork.args, kept[:pipe], fork.env, cwd=fork.cwd, **stdio)
        except OSError:
            self._code = 1  # as a program that could not start: its parent's next read says it has gone

    def _release(self) -> None:
        for fd in self._kept:
            os.close(fd)
        self._kept = ()
