"""ui.live: run groups, snapshots and the status sentences a page shows, on a real runner."""

from __future__ import annotations

import re

import pytest

from core.engine import data
from core.results import EpochInProgress
from core.runner import JobStatus, Runner
from core.settings.config import TrainConfig
from tests.conftest import wait_until
from ui import live

# Synthetic data: always available, and small enough to train in a second.
SHORT = TrainConfig(dataset="synthetic", train_subset=200, batch_size=50, epochs=2)
LONG = TrainConfig(dataset="synthetic", train_subset=2000, batch_size=10, epochs=500)


def test_a_group_queued_behind_another_says_what_it_waits_for_then_finishes(shared_runner):
    _group_queued_behind_another(shared_runner)


def _group_queued_behind_another(runner: Runner) -> None:
    first = live.submit_group(runner, [LONG])
    plain = TrainConfig(**{**SHORT.to_dict(), "execution": "keras-fit"})
    second = live.submit_group(runner, [plain, SHORT])
    labels = ["CPU (plain fit)", "CPU (multi-step loop, XLA)"]
    assert live.group_ids(runner, second[1]) == second
    assert live.active_group(runner) == first

    wait_until(lambda: runner.status(first[0]).done >= 1)
    waiting = [runner.status(i) for i in second]
    assert live.is_active(waiting)
    line = live.status_line(waiting, labels, runner.current())
    assert re.fullmatch(r"Waiting: another session is training softmax on CPU, epoch \d+ of 500\.", line), line
    running = runner.status(first[0])
    copy = live.snapshot(running)
    assert copy.epochs == list(running.items) and copy.status == "running"

    runner.cancel(first[0])
    for run_id in second:
        runner.wait(run_id, 120)
    done = [runner.status(i) for i in second]
    assert not live.is_active(done)
    assert (
        live.status_line(done, labels, runner.current())
        == "CPU (plain fit): done, 2 epochs  ·  CPU (multi-step loop, XLA): done, 2 epochs"
    )
    stopped = runner.status(first[0])
    assert stopped.state == "cancelled" and 1 <= stopped.done < 500
    line = live.status_line([stopped], ["CPU"], None)
    assert line == f"CPU: stopped after {stopped.done} of 500 epochs"
    assert live.snapshot(stopped) is stopped.result and live.active_group(runner) == []


def test_a_running_group_reads_epoch_by_epoch_and_notes_stopping():
    status = JobStatus("g-1", "running", None, 2, 10, (), None, None, SHORT)
    queued = JobStatus("g-2", "queued", 1, 0, 10, (), None, None, SHORT)
    assert live.status_line([status, queued], ["CPU", "GPU:0"], status) == "CPU: epoch 3 of 10  ·  GPU:0: next"
    assert live.status_line([status], ["CPU"], status, stopping=True) == "CPU: epoch 3 of 10 (stopping…)"
    # After epoch 1 a run measures its step for seconds before epoch 2's first call: the line says so.
    at_work = EpochInProgress(2, (), measuring=True)
    measuring = JobStatus("g-1", "running", None, 1, 10, (), None, None, SHORT, in_progress=at_work)
    said = "CPU: measuring the step  ·  GPU:0: next"
    assert live.status_line([measuring, queued], ["CPU", "GPU:0"], measuring) == said
    other = JobStatus("h-1", "running", None, 0, 5, (), None, None, LONG)
    finished = JobStatus("g-1", "completed", None, 1, 1, (), None, None, SHORT)
    assert live.status_line([finished], ["CPU"], other) == (
        "CPU: done, 1 epoch  ·  another session is training softmax on CPU, epoch 1 of 5; a Run now would wait for it"
    )


def starting(dataset: str) -> JobStatus:
    config = TrainConfig(dataset=dataset)
    return JobStatus("g-1", "running", None, 0, config.epochs, (), None, None, config)


def test_a_first_download_shows_its_progress(monkeypatch, tmp_path):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    total = sum(data.DOWNLOAD_BYTES["mnist"].values())
    assert live.download_line([starting("mnist")]) == (f"Downloading MNIST: 0.0 of {total / 1e6:.1f} MB", 0.0)
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "mnist.npz").write_bytes(b"\0" * 5_000_000)
    text, fraction = live.download_line([starting("mnist")])
    assert text == f"Downloading MNIST: 5.0 of {total / 1e6:.1f} MB"
    assert fraction == pytest.approx(5_000_000 / total)
    # Once epoch 1 has finished, or for generated data, there is nothing to download.
    assert (
        live.download_line([JobStatus("g-1", "running", None, 1, 3, (), None, None, TrainConfig(dataset="mnist"))])
        is None
    )
    assert live.download_line([starting("synthetic")]) is None
    if data.availability("fashion_mnist").available:  # read in place from Debian's package
        assert live.download_line([starting("fashion_mnist")]) is None


def test_a_sweep_in_the_queue_says_what_it_is_doing():
    from core.settings.config import SweepConfig

    config = SweepConfig(model="mlp", batch_sizes=(16, 64, 256))
    status = JobStatus(
        run_id="s1",
        state="running",
        position=None,
        done=1,
        total=config.progress_total,
        items=(),
        result=None,
        error=None,
        config=config,
        unit=SweepConfig.progress_unit,
    )
    assert live.doing(status) == "sweeping mlp on CPU, point 2 of 3"
    waiting = JobStatus("t1", "queued", 1, 0, 3, (), None, None, SHORT)
    assert (
        live.status_line([waiting], ["CPU"], status) == "Waiting: another session is sweeping mlp on CPU, point 2 of 3."
    )
    # No words of its own: the status line beside it carries the one count ("point 2 of 3").
    assert live.progress_bar([status]) == ("", pytest.approx(1 / 3))


def test_a_page_redraws_at_once_when_a_job_starts_ends_or_draws_its_first_point_but_epochs_at_most_every_redraw_s():
    from ui.redraw import REDRAW_S, should_redraw

    # JobsNow.progress(): per job, Drawn(run_id, state, epochs done, REDRAW_S steps moved, -1 before a call)
    drawn = (("a", "running", 1, 0), ("b", "running", 1, 0))
    landed = (("a", "running", 2, 0), ("b", "running", 1, 0))
    assert not should_redraw(drawn, drawn, drawn_at=0.0, now=100.0)  # nothing new: never
    assert not should_redraw(landed, drawn, drawn_at=10.0, now=10.0 + REDRAW_S / 2)  # an epoch, soon after a draw
    assert should_redraw(landed, drawn, drawn_at=10.0, now=10.0 + REDRAW_S)  # ... and once REDRAW_S has passed
    # Runs taking turns: once both have finished epoch 2 (a round), at once, each shown at the same epoch.
    assert should_redraw((("a", "running", 2, 0), ("b", "running", 2, 0)), landed, drawn_at=10.0, now=10.1)
    moved = (("a", "running", 1, 1), ("b", "running", 1, 0))  # a long epoch's race moved
    assert not should_redraw(moved, drawn, drawn_at=10.0, now=11.0)
    ended = (("a", "completed", 2, 0), ("b", "running", 1, 0))
    assert should_redraw(ended, drawn, drawn_at=10.0, now=10.1)  # a job ending: at once, its headline with it
    started = (("a", "queued", 0, -1),)
    assert should_redraw((("a", "running", 0, -1),), started, drawn_at=10.0, now=10.1)
    assert should_redraw(drawn, None, drawn_at=0.0, now=0.0)  # never drawn
    # A run's first points (epoch 1's first calls; -1: none yet): at once, however soon after the last draw.
    before = (("a", "running", 0, -1), ("b", "running", 0, -1))
    assert should_redraw((("a", "running", 0, 0), ("b", "running", 0, -1)), before, drawn_at=10.0, now=10.1)
    assert not should_redraw(
        (("a", "running", 0, 1), ("b", "running", 0, -1)), (("a", "running", 0, 0), before[1]), drawn_at=10.0, now=10.1
    )
