"""core.snippet: the CLI command and the plain Keras script reproduce the dashboard's settings."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from core import snippet
from core.cli import build_parser, config_from_args
from core.config import DATASETS, EXECUTIONS, MODELS, OPTIMIZERS, TrainConfig
from tests.conftest import ROOT

CONFIGS = [
    TrainConfig(),
    TrainConfig(model="mlp", hidden_units=64, optimizer="adam", learning_rate=0.001, train_subset=20_000, epochs=3),
    TrainConfig(model="cnn", device="gpu:1", execution="keras-default", seed=7, batch_size=256, dataset="synthetic"),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_the_cli_command_parses_back_into_the_same_config(config):
    words = shlex.split(snippet.cli_command(config, "run.json"))
    assert words[:4] == ["python", "-m", "core", "train"]
    args = build_parser().parse_args(words[3:])
    assert config_from_args(args) == config and args.json == "run.json"


def test_the_keras_script_is_valid_python_for_every_setting():
    for dataset in DATASETS:
        for model in MODELS:
            for optimizer in OPTIMIZERS:
                config = TrainConfig(dataset=dataset, model=model, optimizer=optimizer, device="gpu:1")
                code = snippet.keras_code(config)
                compile(code, f"{dataset}-{model}-{optimizer}", "exec")
                assert 'tf.device("/GPU:1")' in code


def test_the_keras_script_trains_on_the_device_it_names(tmp_path, fashion_mnist):
    # Keras' loader reads its cache; point the cache at the same real files, offline.
    cache = tmp_path / "datasets" / "fashion-mnist"
    cache.mkdir(parents=True)
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz"):  # fmt: skip
        (cache / name).symlink_to(f"{fashion_mnist.source}/{name}")
    config = TrainConfig(epochs=1, train_subset=500, batch_size=50, execution="keras-fit")
    done = subprocess.run(
        [sys.executable, "-c", snippet.keras_code(config)],
        cwd=ROOT,
        env={**os.environ, "KERAS_HOME": str(tmp_path), "TF_CPP_MIN_LOG_LEVEL": "3"},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].endswith("CPU:0")
    assert "val_accuracy" in done.stdout


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_the_script_shows_each_execution_mode_with_jit_compile_set(execution):
    for device, jit in (("cpu", "jit_compile=False"), ("gpu:1", "jit_compile=True")):
        code = snippet.keras_code(TrainConfig(execution=execution, device=device), steps_per_execution=40)
        compile(code, execution, "exec")
        assert jit in code  # set explicitly, never left to Keras' "auto"
        assert ("steps_per_execution=40" in code) == (execution == "keras-fit-spe")
        assert ("model.fit(" in code) == execution.startswith("keras-fit")
        assert ("@tf.function" in code) == (execution == "multi-step-loop")


def test_the_multi_step_loop_script_trains_on_the_device_it_names(tmp_path):
    config = TrainConfig(execution="multi-step-loop", dataset="synthetic", train_subset=500, epochs=2, batch_size=50)
    # Saved as a file, as a person would: AutoGraph reads a tf.function's source (python -c has none).
    script = tmp_path / "loop.py"
    script.write_text(snippet.keras_code(config))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1].endswith("CPU:0")
    # Synthetic data is learnable: well above the 10 % of guessing after two epochs.
    assert float(lines[-2].rsplit(" ", 1)[-1]) > 0.5
