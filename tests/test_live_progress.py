"""An epoch still training moves the race's line: its calls so far reach the page, never the history.

The real engine on synthetic data, in-process and through the Runner's worker process; the store is real SQLite.
"""

import pytest

from core.analysis import compare
from core.engine import training
from core.history.store import Store, attach
from core.results import CallPoint, EpochInProgress, EpochMetrics, RunResult
from core.settings.config import TrainConfig
from tests.conftest import borrowed, wait_until

# One epoch of several seconds on any machine: keras-fit (a callback per step, on Keras' threads) at batch 10.
LONG_EPOCH = TrainConfig(dataset="synthetic", train_subset=12_000, batch_size=10, epochs=1, execution="keras-fit")


@pytest.mark.parametrize("execution", ["keras-fit", "multi-step-loop"])
def test_an_epoch_in_progress_sends_its_calls_so_far_in_order(monkeypatch, execution):
    monkeypatch.setattr(training, "PROGRESS_SECONDS", 0.05)
    seen: list[EpochInProgress] = []
    config = TrainConfig(dataset="synthetic", train_subset=2000, batch_size=10, epochs=2, execution=execution)
    result = training.train(config, on_progress=seen.append)
    assert result.status == "completed", result.error
    assert seen and {p.epoch for p in seen} <= {1, 2}
    # Once, between epoch 1's calls and epoch 2's: the run measures its step (seconds with no call to send).
    measuring = [i for i, p in enumerate(seen) if p.measuring]
    assert len(measuring) == 1 and seen[measuring[0]].epoch == 2 and not seen[measuring[0]].calls
    assert {p.epoch for p in seen[: measuring[0]]} <= {1} and {p.epoch for p in seen[measuring[0] :]} == {2}
    for progress in seen:
        seconds = [c.seconds for c in progress.calls]
        assert seconds == sorted(seconds) and all(c.steps > 0 for c in progress.calls)
    # Each epoch's calls so far only grow, and end before the finished epoch's own last call.
    for epoch in (1, 2):
        samples = [p.calls[-1].samples for p in seen if p.epoch == epoch and p.calls]
        assert samples == sorted(samples)
        if samples:
            assert samples[-1] <= result.epochs[epoch - 1].calls[-1].samples


def test_a_running_jobs_epoch_in_progress_is_on_its_status_and_never_in_the_store(tmp_path, shared_runner):
    store = Store(tmp_path / "runs.sqlite3")
    with borrowed(shared_runner) as runner:
        attach(runner, store)
        run_id = runner.submit(LONG_EPOCH)
        seen = []

        def finished() -> bool:
            status = runner.status(run_id)
            if status.in_progress is not None:
                seen.append(status.in_progress)
            return status.state not in ("queued", "running")

        wait_until(finished, 180, "the run's end", every=0.05)
        status = runner.wait(run_id, 30)  # its listeners (the store's writes) have seen the end once wait() returns
        assert status.state == "completed", status.error
        assert status.in_progress is None and status.done == 1  # finished: nothing is in progress any more
    assert seen, "no epoch in progress was seen during a several-second epoch"
    assert all(isinstance(p, EpochInProgress) and p.epoch == 1 and p.calls for p in seen)
    assert [p.calls[-1].samples for p in seen] == sorted(p.calls[-1].samples for p in seen)
    stored = store.get(run_id)
    assert [type(e) for e in stored.epochs] == [EpochMetrics] and stored.status == "completed"


def test_the_race_adds_the_epoch_in_progress_after_the_finished_ones():
    call = CallPoint(seconds=1.0, samples=100, steps=10, call_seconds=0.2, train_loss=0.5, train_accuracy=0.8)
    done = EpochMetrics(1, 0.5, 0.8, 0.5, 0.79, 1.5, 0.1, 100.0, True, calls=[call])
    run = RunResult(config={}, host={}, device={}, status="running", epochs=[done])
    later = CallPoint(seconds=2.0, samples=300, steps=20, call_seconds=0.4, train_loss=0.4, train_accuracy=0.85)
    rows = compare.race_points(run, EpochInProgress(2, (later,)))
    assert [(r["epoch"], r["split"], r["seconds"]) for r in rows] == [
        (1, "train", 1.0),
        (1, "test", 1.5),
        (2, "train", 2.0),
    ]
    # An epoch in progress that has meanwhile finished (the status was older than the result) adds nothing.
    assert compare.race_points(run, EpochInProgress(1, (later,))) == compare.race_points(run)


def test_during_a_long_first_epoch_the_train_view_already_draws_the_race():
    from tests.test_app import page, settle
    from ui.resources import get_runner

    at = page("Train")
    for key, value in {
        "dataset": "synthetic",
        "model": "softmax",
        "train_subset": 12_000,
        "batch_size": 10,
        "epochs": 1,
        "mode": "cpu",
        "execution": "keras-fit",
    }.items():
        at.session_state[key] = value
    at.run().button(key="run").click().run()
    (run_id,) = at.session_state["train"].ids

    def in_progress() -> bool:
        status = get_runner().status(run_id)
        assert status.state in ("queued", "running"), "the run ended before an epoch in progress was seen"
        return status.in_progress is not None and bool(status.in_progress.calls)

    wait_until(in_progress, 120, "an epoch in progress", every=0.05)
    at.run()
    infos = [i.value for i in at.info]
    assert not any(i.startswith("The charts appear when epoch 1 finishes") for i in infos)
    assert any(i.startswith("Seconds per epoch appear when epoch 1 finishes") for i in infos)
    assert at.get("vega_lite_chart"), "the race against the clock is drawn during epoch 1"
    settle(at)
    assert not at.exception


def test_epoch_1s_first_call_is_sent_at_once_and_the_device_is_measured_after_epoch_1_in_a_turn_of_its_own(
    monkeypatch,
):
    monkeypatch.setattr(training, "PROGRESS_SECONDS", 1000.0)  # only the first call of each epoch is sent
    seen: list[EpochInProgress] = []
    turns: list[int] = []
    config = TrainConfig(dataset="synthetic", train_subset=1000, batch_size=10, epochs=2, execution="multi-step-loop")
    result = training.train(config, on_progress=seen.append, take_turn=lambda: turns.append(len(seen)))
    assert result.status == "completed", result.error
    # The race moves from epoch 1's first call (the page draws it seconds after Run), not from epoch 1's end.
    # (An epoch of one call, as epoch 2 may be here, has no call to send before it ends.)
    # Then epoch 2's turn begins with the device's measurements, said before they take their seconds.
    assert seen[0].epoch == 1 and seen[0].calls and seen[1] == EpochInProgress(2, (), measuring=True)
    assert [p.epoch for p in seen[2:]] in ([], [2]) and all(p.calls for p in seen[2:])
    assert seen[0].calls[0].samples <= result.epochs[0].calls[-1].samples
    # Two turns: the setup with epoch 1, then the device's measurements with epoch 2; a steady epoch comes after them.
    assert turns == [0, 1]
    limits = result.measured.limits
    assert limits.peak_gflops and limits.bandwidth_gbs and result.measured.setup_seconds > 0
    one = training.train(TrainConfig(**{**config.to_dict(), "epochs": 1}), take_turn=lambda: turns.append(-1))
    assert one.status == "completed" and one.measured.limits.peak_gflops and turns[2:] == [-1, -1]  # measured last
