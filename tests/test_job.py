"""The job skeleton (core.engine.job) and the multi-step runner (core.engine.step), on the real TensorFlow."""

import time

import pytest

from core.engine import limits, models
from core.engine.data import DatasetError
from core.engine.devices import DeviceError
from core.engine.job import Cancelled, check_placement, error_text, run_job
from core.engine.step import StepRunner
from core.engine.tf_setup import tf
from core.results import RunResult
from core.settings.config import ConfigError

OOM = "Out of memory on cpu with batch size 100; try a smaller batch size."


@pytest.mark.parametrize(
    ("err", "says"),
    [
        (DeviceError("No GPU is visible."), "No GPU is visible."),
        (DatasetError("Dataset mnist is not on this machine."), "Dataset mnist is not on this machine."),
        (ConfigError("batch_size", "batch_size must be from 1 to 600, not 601."), "batch_size must be from 1 to 600"),
        (ValueError("first line\nsecond line"), "ValueError: first line"),
        (RuntimeError(""), "RuntimeError"),
    ],
)
def test_error_text_is_one_sentence(err, says):
    text = error_text(err, OOM)
    assert text.startswith(says) and "\n" not in text


def test_out_of_memory_gets_the_jobs_own_sentence():
    err = tf().errors.ResourceExhaustedError(None, None, "OOM when allocating tensor\nwith shape [...]")
    assert error_text(err, OOM) == OOM


@pytest.mark.parametrize(
    ("raised", "status", "error"),
    [(None, "completed", None), (Cancelled(), "cancelled", None), (KeyError("x"), "failed", "KeyError: 'x'")],
)
def test_run_job_records_how_the_job_ended(raised, status, error):
    def work():
        if raised is not None:
            raise raised

    result = run_job(RunResult(config={}, host={}, device={}), work, OOM)
    assert (result.status, result.error) == (status, error)
    assert result.finished_at


def test_a_failed_peak_measurement_is_none_not_a_failure():
    assert limits.measure("/XPU:0")["peak_gflops"] is None  # no such device: the benchmark raises, the job goes on
    assert limits.measure("/CPU:0")["peak_gflops"] > 0


def test_placement_check_names_both_devices():
    with tf().device("/CPU:0"):
        model = models.build("softmax")
    assert check_placement(model, "/CPU:0") == "CPU:0"
    with pytest.raises(DeviceError, match=r"placed on CPU:0, not GPU:0"):
        check_placement(model, "/GPU:0")


def _counting_chunk(seconds_per_call: float = 0.0):
    # A stand-in train_chunk(order, start, count) that records each call's (start, count).
    t = tf()
    calls = []

    def train_chunk(order, start, count):
        calls.append((int(start), int(count)))
        time.sleep(seconds_per_call)
        return t.constant(float(count)), t.constant(2.0 * int(count))

    return train_chunk, calls


def test_step_runner_walks_the_order_and_wraps_when_it_needs_more_steps():
    chunk, calls = _counting_chunk()
    runner = StepRunner(chunk, batches=4)
    totals = runner.run(tf().constant([0]), 10, lambda: False)
    assert (totals.loss_sum, totals.hits) == (10.0, 20.0)
    assert sum(count for _, count in calls) == 10
    assert all(start + count <= 4 for start, count in calls)  # never past the order's last batch
    assert calls[0] == (0, 1)  # the first call runs one step: it traces the step


def test_step_runner_checks_stop_before_every_call():
    # Calls slower than TARGET_CALL_SECONDS: one step each, so every step is preceded by a check.
    chunk, calls = _counting_chunk(seconds_per_call=0.25)
    asked = []
    with pytest.raises(Cancelled):
        StepRunner(chunk, batches=100).run(tf().constant([0]), 100, lambda: asked.append(1) or len(asked) > 2)
    assert len(calls) == 2 and len(asked) == 3


def test_step_runner_splits_a_run_into_min_calls_of_at_least_min_call_seconds():
    t = tf()
    calls = []

    def chunk(order, start, count):  # 2 ms per step: a 0.2 s call would be 100 steps
        calls.append(int(count))
        time.sleep(0.002 * int(count))
        return t.constant(0.0), t.constant(0.0)

    runner = StepRunner(chunk, batches=100, min_calls=4)
    runner.run(t.constant([0]), 100, lambda: False)
    assert calls[0] == 1  # the first call traces the step
    calls.clear()
    runner.run(t.constant([0]), 100, lambda: False)
    # Not one call of 0.2 s (100 steps): four equal calls of 25 steps (50 ms each, over MIN_CALL_SECONDS).
    assert calls == [25, 25, 25, 25]


def test_step_runner_never_cuts_a_call_under_min_call_seconds_and_splits_a_run_evenly():
    t = tf()
    calls = []

    def chunk(order, start, count):  # 0.1 ms per step: four calls of 100 steps would be 10 ms, under 30 ms
        calls.append(int(count))
        time.sleep(0.0001 * int(count))
        return t.constant(0.0), t.constant(0.0)

    runner = StepRunner(chunk, batches=400, min_calls=4)
    runner.run(t.constant([0]), 400, lambda: False)
    calls.clear()
    runner.run(t.constant([0]), 400, lambda: False)
    # Calls of at least MIN_CALL_SECONDS (300 steps or more: two calls of 200, never four of 100), and no short
    # remainder (not 300 + 100). Only a call measured 3x slower than it slept would make four.
    assert sum(calls) == 400 and len(calls) <= 3 and min(calls) >= max(calls) / 2, calls
