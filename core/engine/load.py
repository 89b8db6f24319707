"""How busy the rest of the machine was while an epoch trained: all CPU time (/proc/stat), less this process's and
the dashboard server's (/proc/PID/stat), as cores in use on average. Linux only; elsewhere nothing is measured.

The server's process id comes from the runner (core.runner.protocol.Hello) in SERVER_PID_ENV; a CLI run has none.
The figures are kernel ticks (USER_HZ, 100 a second): an epoch of 0.1 s is read to about a tenth of a core.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

SERVER_PID_ENV = "TFDASH_SERVER_PID"
BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # /proc/stat's cpu line: user nice system (idle iowait) irq softirq steal


@dataclass(frozen=True)
class Sample:
    """CPU seconds so far: the whole machine's, and this run's own (its process and the server's)."""

    at: float  # time.perf_counter()
    machine: float
    ours: float


def _ticks() -> float:
    return float(os.sysconf("SC_CLK_TCK"))


def _process_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _ticks()  # utime, stime: fields 14 and 15 of the line


def _ours() -> list[int]:
    pids = [os.getpid()]
    server = os.environ.get(SERVER_PID_ENV, "")
    if server.isdigit() and int(server) != pids[0]:
        pids.append(int(server))
    return pids


def sample() -> Sample | None:
    """The machine's and this run's CPU seconds now; None where /proc cannot be read (not Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            cpu = f.readline().split()[1:]
        machine = sum(int(cpu[i]) for i in BUSY_FIELDS) / _ticks()
        ours = sum(_process_seconds(pid) for pid in _ours() if os.path.exists(f"/proc/{pid}"))
    except (OSError, ValueError, IndexError):
        return None
    return Sample(time.perf_counter(), machine, ours)


def others_cores(before: Sample | None, after: Sample | None) -> float | None:
    """Cores the rest of the machine used on average between two samples; None where either is missing."""
    if before is None or after is None or after.at <= before.at:
        return None
    others = (after.machine - before.machine) - (after.ours - before.ours)
    return round(max(0.0, others) / (after.at - before.at), 3)
