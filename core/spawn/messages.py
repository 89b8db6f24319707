"""What a process and its zygote (core.spawn.zygote, core.spawn.forker) say to each other: one dataclass per message.

Parent -> zygote: Import, Fork (followed by the program's descriptors, passed over the socket), Kill.
Zygote -> parent: Forked (the pid, in the order of the Forks) or Refused, Exited.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Import:
    """Import these modules too (they run no op, start no thread) before the next fork."""

    modules: tuple[str, ...]


@dataclass(frozen=True)
class Fork:
    """Fork and run `python -m module *args` there, with env and cwd (the parent's now, or the ones given). Passed
    after this message: with `pipe`, one descriptor the program is given (its number appended to args); with
    `stdio`, three that become its stdin, stdout and stderr."""

    module: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    pipe: bool = False
    stdio: bool = False

    @property
    def descriptors(self) -> int:
        """How many descriptors follow the message."""
        return int(self.pipe) + 3 * int(self.stdio)


@dataclass(frozen=True)
class Kill:
    """SIGKILL a child, unless it has already been reaped (its pid may be another's by now)."""

    pid: int


@dataclass(frozen=True)
class Forked:
    """The child of the oldest Fork not yet answered."""

    pid: int


@dataclass(frozen=True)
class Exited:
    """A child has ended: code as subprocess.Popen.returncode is (-N for signal N)."""

    pid: int
    code: int


@dataclass(frozen=True)
class Refused:
    """The oldest Fork not yet answered was not forked, nor will any later one be: a fork from the zygote is no longer
    safe (reason says why). Its children run on."""

    reason: str
