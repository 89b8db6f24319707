"""What a page says about jobs in progress: groups of jobs, snapshots and one-line status sentences.

A group is the jobs one click submits (a Run: CPU then GPU, say; a Run sweep: one sweep); the runner records
it, so any page, a reloaded one included, finds all of a group from one id. Their ids GROUP-1, GROUP-2, ...
name the group in the history too. Every count and progress word comes from core.language.progress. No streamlit here.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from core.engine import data as datasets
from core.language import progress
from core.language.i18n import _
from core.results import RunResult
from core.results.states import ACTIVE, State
from core.runner import JobStatus, Runner
from core.settings.config import TrainConfig


def submit_group(runner: Runner, configs: Sequence[object]) -> list[str]:
    """Queue configs as one group (a comparison's runs take turns epoch by epoch: core.runner.turns); return their
    ids."""
    group = uuid.uuid4().hex[:8]
    return runner.submit_group(list(configs), [f"{group}-{i}" for i, _ in enumerate(configs, 1)])


def group_ids(runner: Runner, run_id: str) -> list[str]:
    """Every run id in `run_id`'s group, in order, as the runner recorded it (`run_id` alone if it never saw it)."""
    status = runner.status(run_id)
    return list(status.group) if status is not None else [run_id]


def active_group(runner: Runner, config_type: type = TrainConfig, jobs: Sequence[JobStatus] | None = None) -> list[str]:
    """The group of the first running or queued job of config type `config_type`, or [] when there is none."""
    active = [j for j in (runner.jobs() if jobs is None else jobs) if isinstance(j.config, config_type)]
    return group_ids(runner, active[0].run_id) if active else []


def is_active(jobs: Sequence[JobStatus]) -> bool:
    """Whether any of `jobs` is queued or running."""
    return any(s.state in ACTIVE for s in jobs)


def snapshot(s: JobStatus) -> RunResult:
    """A finished run's result, or a consistent copy of a running one's epochs so far."""
    if s.result is not None and s.state not in ACTIVE:
        return s.result
    live = s.result
    device = dict(live.device) if live else {"label": s.config.device.upper()}
    return RunResult(s.config.to_dict(), dict(live.host) if live else {}, device, s.state, None, list(s.items))


def moved(s: JobStatus, every: float) -> int:
    """How many times `every` seconds of training the epoch still training has reached: -1 before its first call
    (or between epochs), so that a run's first points are a change of their own."""
    calls = s.in_progress.calls if s.in_progress is not None else ()
    return int(calls[-1].seconds // every) if calls else -1


def doing(job: JobStatus, progress_words: bool = True) -> str:
    """'training softmax on CPU, epoch 3 of 10', 'sweeping mlp on CPU, GPU, point 2 of 6'; no progress while queued
    (nor without progress_words)."""
    config = job.config
    if isinstance(config, TrainConfig):
        what = _("training {model} on {device}").format(model=config.model, device=config.device.upper())
    else:
        devices = ", ".join(d.upper() for d in getattr(config, "devices", ()))
        what = _("sweeping {model} on {devices}").format(model=getattr(config, "model", "?"), devices=devices)
    if job.state == State.RUNNING and progress_words:
        return _("{what}, {progress}").format(what=what, progress=progress.in_progress(job.unit, job.done, job.total))
    return what


def status_line(
    jobs: Sequence[JobStatus], labels: Sequence[str], current: JobStatus | None, stopping: bool = False
) -> str:
    """'CPU: epoch 3 of 10 · GPU:0: next', or 'Waiting: another session is training ...' while queued behind it."""
    mine = {s.run_id for s in jobs}
    if current is not None and current.run_id not in mine and any(s.state == State.QUEUED for s in jobs):
        return _("Waiting: another session is {doing}.").format(doing=doing(current))
    parts = []
    for s, label in zip(jobs, labels, strict=True):
        words = progress.state_words(s.state, s.unit, s.done, s.total, s.began)
        if s.state == State.RUNNING and getattr(s.in_progress, "measuring", False):
            words = _("measuring the step")  # short: three runs' words fit two lines at 1280x720
        said = _("{label}: {words} (stopping…)") if stopping and s.state == State.RUNNING else _("{label}: {words}")
        parts.append(said.format(label=label, words=words))
    if current is not None and current.run_id not in mine:
        parts.append(_("another session is {doing}; a Run now would wait for it").format(doing=doing(current)))
    return "  ·  ".join(parts)


def progress_bar(jobs: Sequence[JobStatus]) -> tuple[str, float]:
    """('', 0.15): the share of the group's items finished, with no words of its own.

    The status line beside it already says "epoch 4 of 10" per run: a second count here ("3 of 10
    epochs") read as a contradiction on a projector, so the bar only shows how far the group is.
    """
    done, total = sum(s.done for s in jobs), sum(s.total or 0 for s in jobs)
    return "", min(done / total, 1.0) if total else 0.0


def download_line(runs: Sequence[JobStatus]) -> tuple[str, float] | None:
    """('Downloading MNIST: 3.1 of 11.5 MB', 0.27) while a starting run's dataset is still arriving."""
    for s in runs:
        if s.state != State.RUNNING or s.done or not isinstance(s.config, TrainConfig):
            continue
        name = s.config.dataset
        got = datasets.download_progress(name)
        # Bytes in Keras' cache but not all of them: arriving. None at all: arriving only if the
        # dataset is not elsewhere either (Debian's Fashion-MNIST is read in place, never copied).
        if got and got[0] < got[1] and (got[0] > 0 or not datasets.availability(name).available):
            label = datasets.REGISTRY[name].label
            said = _("Downloading {dataset}: {got:.1f} of {total:.1f} MB")
            return said.format(dataset=label, got=got[0] / 1e6, total=got[1] / 1e6), got[0] / got[1]
    return None


def queue_line(jobs: Sequence[JobStatus], mine: set[str], warming: bool = False) -> str:
    """The runner's queue in one line: what runs now, then what waits, by position; this page's marked. warming:
    nothing is queued and the workers for the next job are still starting (Run waits for them)."""
    if not jobs and warming:
        return _("Queue — empty: TensorFlow is starting in the workers that will train; Run in a few seconds.")
    if not jobs:
        return _("Queue — empty: runs and sweeps from every open page take turns, one at a time.")

    def named(job: JobStatus) -> str:
        return _("{doing} (this page)").format(doing=doing(job)) if job.run_id in mine else doing(job)

    running = [j for j in jobs if j.state == State.RUNNING]
    now = [_("now: {doing}").format(doing=named(j)) for j in running]
    # A comparison's runs taking turns (core.runner.turns): what they train once, not each progress.
    if len(running) > 1:
        what = "; ".join(dict.fromkeys(doing(j, progress_words=False) for j in running))
        now = [_("now, {n} runs taking turns: {what}").format(n=len(running), what=what)]
        now = [_("{doing} (this page)").format(doing=now[0])] if running[0].run_id in mine else now
    waiting = [f"{j.position}. {named(j)}" for j in jobs if j.state == State.QUEUED]
    waiting_words = [_("waiting: {jobs}").format(jobs=", ".join(waiting))] if waiting else []
    return _("Queue — {jobs}").format(jobs="  ·  ".join(now + waiting_words))
