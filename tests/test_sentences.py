"""The smaller sentences say what is so: what else two runs differ in, one word for a stopped run, one format a
column."""

from __future__ import annotations

from core.analysis import compare
from core.language import progress
from core.results import EpochMetrics, RunResult
from ui import run_text


def _run(host: str, variables_on: str, **config) -> RunResult:
    epochs = [EpochMetrics(k, 0.5, 0.8, 0.5, 0.8, 1.0, 0.1, 60_000.0, k == 1) for k in (1, 2)]
    base = {"device": "cpu", "model": "softmax", "batch_size": 100, "train_subset": None, "epochs": 2}
    return RunResult({**base, **config}, {"hostname": host}, {"variables_on": variables_on}, "completed", epochs=epochs)


def test_runs_on_one_device_are_not_said_to_differ_in_the_device_and_none_reads_as_all():
    a = _run("vm", "CPU:0", model="mlp", train_subset=30_000)
    b = _run("vm", "CPU:0")
    sentence = run_text.differences_sentence(a, b)
    assert sentence.startswith(
        "Both on CPU:0 on vm, these runs differ in mlp vs softmax; 30,000 samples vs all samples"
    )
    assert "Besides the device" not in sentence and "None" not in sentence
    other = _run("gpu-server", "GPU:0", device="gpu", batch_size=256)
    assert run_text.differences_sentence(other, b).startswith(
        "Besides the device, these runs differ in batch 256 vs batch 100"
    )
    assert run_text.differences_sentence(b, _run("vm", "CPU:0")) is None


def test_a_stopped_run_is_stopped_on_every_view():
    assert progress.status_words("cancelled") == "stopped" == progress.state_words("cancelled", "epoch", 3, 10)[:7]
    assert progress.status_words("completed") == "completed"


def test_a_run_stopped_in_its_first_epoch_says_during_not_before():
    assert progress.state_words("cancelled", "epoch", 0, 10) == "stopped before epoch 1"  # queued, or setting up
    assert progress.state_words("cancelled", "epoch", 0, 10, began=True) == "stopped during epoch 1"
    assert progress.state_words("cancelled", "point", 0, 4, began=True) == "stopped during point 1"
    assert progress.state_words("cancelled", "epoch", 2, 10, began=True) == "stopped after 2 of 10 epochs"


def test_two_runs_on_one_device_before_epoch_2_are_told_what_is_missing():
    assert "device" not in compare.NEEDS and "epoch 2" in compare.NEEDS
