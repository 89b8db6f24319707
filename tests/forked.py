"""`python -m MODULE ARGS` forked from this process's zygote (core.spawn.zygote), run to its end as
subprocess.run(capture_output=True, text=True) runs it, or held as subprocess.Popen(stdout=PIPE, stderr=PIPE,
text=True) holds it: the tests' CLI calls (conftest.run_cli, cli_process) import TensorFlow once between them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from core.spawn import zygote
from core.spawn.messages import Fork


def _fork(preload, module, args, env, cwd):
    """The forked child and its stdout and stderr's reading ends, or None where this process's zygote does not serve
    `env` (an environment that changes what imports read: KERAS_HOME...) or died before it forked."""
    parent = zygote.serving(env) if preload and zygote.available() else None
    if parent is None:
        return None
    where = str(cwd) if cwd is not None else os.getcwd()
    fork = Fork(module, tuple(args), dict(os.environ) if env is None else dict(env), where, stdio=True)
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    with open(os.devnull, "rb") as stdin:
        child = parent.fork(preload, fork, (stdin.fileno(), out_w, err_w))
    os.close(out_w)
    os.close(err_w)
    if child.pid:
        return child, out_r, err_r
    os.close(out_r)
    os.close(err_r)
    return None


def run(
    preload: tuple[str, ...],
    module: str,
    args: tuple[str, ...],
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess:
    """Forked where this process's zygote serves `env` (this process's environment by default), else a fresh
    interpreter (an environment that changes what imports read: KERAS_HOME...). TimeoutExpired after `timeout` s,
    the program killed."""
    argv = [sys.executable, "-m", module, *args]
    if forked := _fork(preload, module, args, env, cwd):
        return _finish(*forked, argv, timeout)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _finish(child, out_r: int, err_r: int, argv: list[str], timeout: float | None) -> subprocess.CompletedProcess:
    """The forked program's output and code."""
    said: dict[int, bytes] = {}
    readers = [threading.Thread(target=_read_all, args=(fd, said), daemon=True) for fd in (out_r, err_r)]
    for reader in readers:
        reader.start()
    try:
        code = child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        raise subprocess.TimeoutExpired(argv, timeout or 0) from None
    finally:
        for reader in readers:
            reader.join()
    text = {fd: said.get(fd, b"").decode(errors="replace") for fd in (out_r, err_r)}
    return subprocess.CompletedProcess(argv, code, text[out_r], text[err_r])


def _read_all(fd: int, said: dict[int, bytes]) -> None:
    with open(fd, "rb") as stream:
        said[fd] = stream.read()


class Process:
    """A forked program held as subprocess.Popen(stdout=PIPE, stderr=PIPE, text=True) holds one."""

    def __init__(self, child: zygote.Child, out_r: int, err_r: int, argv: list[str]) -> None:
        self.args, self._child = argv, child
        self.stdout, self.stderr = open(out_r, encoding="utf-8"), open(err_r, encoding="utf-8")

    @property
    def pid(self) -> int:
        return self._child.pid

    @property
    def returncode(self) -> int | None:
        return self._child.returncode

    def poll(self) -> int | None:
        return self._child.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self._child.wait(timeout)

    def kill(self) -> None:
        self._child.kill()


def popen(
    preload: tuple[str, ...],
    module: str,
    args: tuple[str, ...],
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Process | subprocess.Popen:
    """The program running, its stdout and stderr text pipes to read; forked where run() would fork it."""
    argv = [sys.executable, "-m", module, *args]
    if forked := _fork(preload, module, args, env, cwd):
        return Process(*forked, argv)
    return subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
