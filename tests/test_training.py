"""train(): the real engine on small data, checked against trusted references."""

import json
import math

import pytest

from core.engine import data as datasets
from core.engine import models
from core.engine.executions import REGISTRY
from core.engine.job import never_stop
from core.engine.step import TARGET_CALL_SECONDS
from core.engine.training import train
from core.results import RunResult
from core.settings.config import EXECUTION_ALIASES, EXECUTIONS, TrainConfig, canonical_execution

TINY = dict(dataset="synthetic", train_subset=600, batch_size=50, seed=3)


def test_tutorial_model_reaches_the_published_baseline(fashion_mnist):
    # Published logistic-regression baseline on Fashion-MNIST: 0.842 test accuracy.
    result = train(
        TrainConfig(dataset="fashion_mnist", model="softmax", epochs=2, batch_size=100, learning_rate=0.1),
        measurements=False,
    )
    assert result.status == "completed", result.error
    assert result.final_test_accuracy() >= 0.80
    assert result.device["variables_on"] == "CPU:0"
    assert result.device["parameters"] == 7_850


@pytest.mark.parametrize(
    ("name", "hidden", "expected"),
    [
        ("softmax", 128, 784 * 10 + 10),  # 7,850: the tutorial's W and b
        ("mlp", 128, (784 * 128 + 128) + (128 * 10 + 10)),  # 101,770
        ("mlp", 32, (784 * 32 + 32) + (32 * 10 + 10)),  # 25,450
        # conv 3x3x1x32 + 32; conv 3x3x32x64 + 64; 28->26->13->11->5, so dense 5*5*64 -> 10
        ("cnn", 128, (9 * 32 + 32) + (9 * 32 * 64 + 64) + (5 * 5 * 64 * 10 + 10)),  # 34,826
    ],
)
def test_parameter_counts_by_hand(name, hidden, expected):
    assert models.build(name, hidden).count_params() == expected


def test_every_epoch_is_recorded_with_honest_fields():
    seen = []
    result = train(TrainConfig(epochs=3, **TINY), on_epoch=lambda m, r: seen.append(m.epoch), measurements=False)
    assert result.status == "completed", result.error
    assert seen == [1, 2, 3]
    assert [e.warmup for e in result.epochs] == [True, False, False]
    for e in result.epochs:
        assert e.train_seconds > 0 and e.eval_seconds > 0
        assert 0 <= e.train_accuracy <= 1 and 0 <= e.test_accuracy <= 1
        # 600 samples in batches of 50 = 12 steps, every sample used once per epoch.
        assert e.samples_per_second == pytest.approx(600 / e.train_seconds)
    # Synthetic data is learnable: above the 10% of guessing after 36 steps on 600 images (not trivial:
    # tests/test_data.py checks where a full run lands).
    assert result.final_test_accuracy() > 0.2


def test_same_seed_same_numbers():
    a = train(TrainConfig(epochs=2, **TINY), measurements=False)
    b = train(TrainConfig(epochs=2, **TINY), measurements=False)
    assert [e.test_accuracy for e in a.epochs] == [e.test_accuracy for e in b.epochs]
    assert [e.train_loss for e in a.epochs] == pytest.approx([e.train_loss for e in b.epochs], rel=1e-5)


@pytest.fixture(scope="module")
def three_modes(fashion_mnist):
    """The same run in each execution mode: a 2,000-image Fashion-MNIST subset, 2 epochs (about 80 %, not saturated)."""
    settings = dict(dataset="fashion_mnist", train_subset=2_000, batch_size=50, epochs=2, seed=5)
    return {name: train(TrainConfig(execution=name, **settings), measurements=False) for name in EXECUTIONS}


def test_every_mode_trains_on_the_same_batches_so_accuracy_agrees(three_modes):
    for name, result in three_modes.items():
        assert result.status == "completed", (name, result.error)
    accuracies = {name: r.final_test_accuracy() for name, r in three_modes.items()}
    assert 0.6 < min(accuracies.values())
    # Same initial weights, same batches in the same order: only float rounding may differ.
    assert max(accuracies.values()) - min(accuracies.values()) <= 0.005, accuracies
    losses = [r.epochs[0].train_loss for r in three_modes.values()]
    assert max(losses) == pytest.approx(min(losses), rel=1e-3)


def test_jit_compile_is_set_explicitly_and_recorded_in_every_mode(three_modes):
    # No GPU here. xla auto on a CPU: on where XLA compiles the whole multi-step call of a dense model (the
    # softmax here), off where Keras compiles one step (slower on a CPU); never left to Keras' "auto".
    assert {name: r.device["jit_compile"] for name, r in three_modes.items()} == {
        "keras-fit": False,
        "keras-fit-spe": False,
        "multi-step-loop": True,
    }


def test_keras_fit_spe_runs_several_steps_per_execution(three_modes):
    spe, fit = three_modes["keras-fit-spe"], three_modes["keras-fit"]
    assert fit.device["steps_per_execution"] == 1
    n = spe.device["steps_per_execution"]
    # 2,000 / 50 = 40 steps an epoch; N is sized for an execution of about 0.2 s, at most an epoch.
    assert 1 < n <= 40
    assert n * spe.device["calibration_step_ms"] <= TARGET_CALL_SECONDS * 1000
    assert "steps_per_execution" not in three_modes["multi-step-loop"].device


def test_keras_fit_spe_asks_stop_once_per_execution_of_n_steps():
    # Keras calls batch callbacks once per execution: the count proves it ran N steps per call.
    checks, by_epoch_end = [], []
    config = TrainConfig(epochs=1, execution="keras-fit-spe", **{**TINY, "train_subset": 2_000, "batch_size": 20})
    result = train(
        config, on_epoch=lambda *_: by_epoch_end.append(len(checks)), should_stop=lambda: checks.append(1) and False
    )
    assert result.status == "completed", result.error
    n = result.device["steps_per_execution"]
    assert n > 1
    test_batches = math.ceil(10_000 / 32)  # model.evaluate's default batch size, over the synthetic test set
    # The epoch's training and evaluation (the device's measurements after it ask too, between their trials).
    assert by_epoch_end == [math.ceil(100 / n) + math.ceil(test_batches / n)]


def test_a_copy_of_a_keras_fit_spe_step_runs_the_runs_calls_not_a_number_calibrated_again():
    # The why's trace runs a copy of the run's step (core.engine.trace.trace): N steps a call as the run has them.
    config = TrainConfig(epochs=1, execution="keras-fit-spe", **{**TINY, "train_subset": 2_000, "batch_size": 20})
    data = datasets.load(config.dataset, config.train_subset, config.seed)
    run, copy = (REGISTRY[config.execution](config, models.build(config.model), data, False) for _ in range(2))
    run.steps_per_execution = 7  # a run's N that the copy's own calibration on this machine would not give
    copy.calls_like(run)
    copy.prepare_epoch()
    copy.train_epoch(never_stop)
    assert copy.call_steps() == 7 and [done for _, done, *_ in copy.marks] == [*range(7, 100, 7), 100]


@pytest.mark.parametrize(("old", "new"), sorted(EXECUTION_ALIASES.items()))
def test_old_execution_names_are_read_as_the_new_ones(old, new):
    config = TrainConfig(execution=old, **TINY)
    assert config.execution == new and config.to_dict()["execution"] == new
    assert canonical_execution(old) == new and canonical_execution(new) == new
    assert TrainConfig.from_dict({**config.to_dict(), "execution": old}) == config


def test_cancel_keeps_finished_epochs():
    finished = []
    result = train(
        TrainConfig(epochs=50, **TINY),
        on_epoch=lambda m, r: finished.append(m.epoch),
        should_stop=lambda: len(finished) >= 2,
        measurements=False,
    )
    assert result.status == "cancelled"
    assert [e.epoch for e in result.epochs] == [1, 2]
    assert result.error is None


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_cancel_during_epoch_1_keeps_no_epoch(execution):
    # Stop at the second check: after the first call (loop) or execution (fit), inside epoch 1.
    checks, finished = [], []

    def stop_at_second_check():
        checks.append(len(finished))
        return len(checks) >= 2

    result = train(
        TrainConfig(epochs=5, execution=execution, **TINY),
        on_epoch=lambda m, r: finished.append(m.epoch),
        should_stop=stop_at_second_check,
    )
    assert result.status == "cancelled" and result.error is None
    assert result.epochs == [] and finished == []
    assert checks[:2] == [0, 0]  # both checks inside epoch 1: no epoch had finished


def test_failure_is_a_result_not_an_exception():
    result = train(TrainConfig(device="cpu:7", epochs=1, **TINY))
    assert result.status == "failed"
    assert "cpu:7" in result.error and "\n" not in result.error
    assert result.epochs == []


def test_diverging_run_still_writes_valid_json():
    # A huge learning rate with Adam blows up; JSON must still be valid (no NaN tokens).
    result = train(TrainConfig(epochs=2, optimizer="adam", learning_rate=10.0, **TINY), measurements=False)
    text = result.to_json()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    for e in data["epochs"]:
        assert all(math.isfinite(v) for v in (e["train_loss"], e["test_loss"]))


def test_json_shape_and_round_trip():
    result = train(TrainConfig(epochs=2, **TINY), run_id="abc123")
    data = json.loads(result.to_json())
    assert list(data)[0] == "schema_version" and data["schema_version"] == 4
    assert {"config", "host", "device", "status", "error", "epochs"} <= set(data)
    assert set(data["epochs"][0]) >= {
        "epoch",
        "train_loss",
        "train_accuracy",
        "test_loss",
        "test_accuracy",
        "train_seconds",
        "eval_seconds",
        "samples_per_second",
        "warmup",
    }
    assert data["host"]["tensorflow"] and data["host"]["cpu_model"]
    assert RunResult.from_dict(data).to_dict() == data
    frame = result.to_frame()
    assert list(frame["epoch"]) == [1, 2] and set(frame["device"]) == {"CPU"}
