"""What a page says about runs in progress: groups of runs, snapshots and one-line status sentences.

A group is the runs one Run click submits (CPU then GPU, say), with ids GROUP-1, GROUP-2, ... so
that any page, a reloaded one included, can find all of a group from one id. No streamlit here.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from core.config import TrainConfig
from core.engine import data as datasets
from core.results import RunResult
from core.runner import JobStatus, Runner

ACTIVE = ("queued", "running")


def submit_group(runner: Runner, configs: Sequence[TrainConfig]) -> list[str]:
    """Queue configs one after another as one group; return their run ids."""
    group = uuid.uuid4().hex[:8]
    return [runner.submit(c, run_id=f"{group}-{i}") for i, c in enumerate(configs, 1)]


def group_ids(runner: Runner, run_id: str) -> list[str]:
    """Every run id in `run_id`'s group, in order."""
    group, ids = run_id.rpartition("-")[0], []
    while group and runner.status(f"{group}-{len(ids) + 1}") is not None:
        ids.append(f"{group}-{len(ids) + 1}")
    return ids or [run_id]


def active_group(runner: Runner) -> list[str]:
    """The group of the training running or queued first, or [] when the runner is idle."""
    active = [j for j in runner.jobs() if isinstance(j.config, TrainConfig)]
    return group_ids(runner, active[0].run_id) if active else []


def is_active(runs: Sequence[JobStatus]) -> bool:
    """Whether any of `runs` is queued or running."""
    return any(s.state in ACTIVE for s in runs)


def snapshot(s: JobStatus) -> RunResult:
    """A finished run's result, or a consistent copy of a running one's epochs so far."""
    if s.result is not None and s.state not in ACTIVE:
        return s.result
    live = s.result
    device = dict(live.device) if live else {"label": s.config.device.upper()}
    return RunResult(s.config.to_dict(), dict(live.host) if live else {}, device, s.state, None, list(s.items))


def doing(job: JobStatus) -> str:
    """'training softmax on CPU, epoch 3 of 10'."""
    if not isinstance(job.config, TrainConfig):
        # A sweep: 'sweeping mlp on CPU,GPU, point 2 of 10'.
        devices = ",".join(d.upper() for d in getattr(job.config, "devices", ()))
        return (
            f"sweeping {job.config.model} on {devices}, {job.unit} {min(job.done + 1, job.total or 1)} of {job.total}"
        )
    total = job.total or 1
    return f"training {job.config.model} on {job.config.device.upper()}, epoch {min(job.done + 1, total)} of {total}"


_WORDS = {
    "queued": lambda s: "next",
    "running": lambda s: f"epoch {min(s.done + 1, s.total or 1)} of {s.total}",
    "completed": lambda s: f"done, {s.done} epoch{'' if s.done == 1 else 's'}",
    "cancelled": lambda s: f"stopped after {s.done} of {s.total} epochs" if s.done else "stopped before epoch 1",
    "failed": lambda s: "failed",
    "interrupted": lambda s: "interrupted",
}


def status_line(
    runs: Sequence[JobStatus], labels: Sequence[str], current: JobStatus | None, stopping: bool = False
) -> str:
    """'CPU: epoch 3 of 10 · GPU:0: next', or 'Waiting: another session is training ...' while queued behind it."""
    mine = {s.run_id for s in runs}
    if current is not None and current.run_id not in mine and any(s.state == "queued" for s in runs):
        return f"Waiting: another session is {doing(current)}."
    parts = []
    for s, label in zip(runs, labels, strict=True):
        words = _WORDS[s.state](s)
        parts.append(f"{label}: {words} (stopping…)" if stopping and s.state == "running" else f"{label}: {words}")
    if current is not None and current.run_id not in mine:
        parts.append(f"another session is {doing(current)}; a new run waits for it")
    return "  ·  ".join(parts)


def download_line(runs: Sequence[JobStatus]) -> tuple[str, float] | None:
    """('Downloading MNIST: 3.1 of 11.5 MB', 0.27) while a starting run's dataset is still arriving."""
    for s in runs:
        if s.state != "running" or s.done or not isinstance(s.config, TrainConfig):
            continue
        name = s.config.dataset
        got = datasets.download_progress(name)
        # Bytes in Keras' cache but not all of them: arriving. None at all: arriving only if the
        # dataset is not elsewhere either (Debian's Fashion-MNIST is read in place, never copied).
        if got and got[0] < got[1] and (got[0] > 0 or not datasets.availability(name).available):
            label = datasets.REGISTRY[name].label
            return f"Downloading {label}: {got[0] / 1e6:.1f} of {got[1] / 1e6:.1f} MB", got[0] / got[1]
    return None
