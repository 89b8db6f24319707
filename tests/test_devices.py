"""Devices: no silent CPU run for a GPU asked for, and variables land where asked."""

import json

import pytest

from core.engine import devices
from core.engine.training import train
from core.settings.config import TrainConfig
from tests.conftest import run_cli


def test_gpu_is_refused_with_advice_when_there_is_none():
    if devices.gpu_count():
        assert devices.resolve("gpu") == "/GPU:0"
        return
    with pytest.raises(devices.DeviceError) as info:
        devices.resolve("gpu")
    assert "No GPU" in str(info.value) and 'pip install "tensorflow[and-cuda]"' in str(info.value)
    result = train(TrainConfig(device="gpu", dataset="synthetic", train_subset=100, epochs=1, batch_size=10))
    assert result.status == "failed" and result.epochs == [] and "No GPU" in result.error


def test_cpu_resolves_and_missing_index_is_named():
    assert devices.resolve("cpu") == "/CPU:0"
    with pytest.raises(devices.DeviceError, match="There is no cpu:9"):
        devices.resolve("cpu:9")


def test_host_info_describes_the_machine():
    info = devices.host_info()
    assert info.cpu_cores >= 1 and info.cpu_model and info.tensorflow.startswith("2.")
    assert len(info.gpus) == devices.gpu_count()


def test_training_on_a_second_logical_cpu_puts_variables_there(tmp_path):
    # Logical devices can only be made before TensorFlow's first op: a fresh process.
    out = tmp_path / "run.json"
    proc = run_cli(
        "train",
        "--device",
        "cpu:1",
        "--dataset",
        "synthetic",
        "--train-subset",
        "200",
        "--batch-size",
        "50",
        "--epochs",
        "1",
        "--json",
        str(out),
        env={"TFDASH_LOGICAL_CPUS": "2"},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["device"]["tf_device"] == "/CPU:1"
    assert data["device"]["variables_on"] == "CPU:1"
    assert data["host"]["logical_cpus"] == 2
    assert "variables on CPU:1" in proc.stdout
