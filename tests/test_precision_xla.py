"""Precision (Keras dtype policies per layer) and XLA (jit_compile) on the real engine, on tiny synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from core.cli import main
from core.engine import models
from core.engine.executions import make_optimizer
from core.engine.step import build_train_chunk
from core.engine.tf_setup import tf
from core.engine.training import train
from core.settings.axes import Comparison
from core.settings.config import EXECUTIONS, TrainConfig

TINY = dict(dataset="synthetic", train_subset=300, batch_size=30, epochs=2, seed=3, model="mlp", hidden_units=32)


@pytest.mark.parametrize(("precision", "dtype"), [("float32", "float32"), ("mixed_bfloat16", "bfloat16")])
def test_a_precision_run_computes_in_its_dtype_and_records_it(precision, dtype):
    result = train(TrainConfig(precision=precision, **TINY))
    assert result.status == "completed", result.error
    assert result.config["precision"] == precision and result.schema_version == 4
    assert result.device["compute_dtype"] == dtype and result.measured.limits.peak_dtype == dtype
    # The layers themselves: built the same way, each computes in the policy's dtype, variables stay float32.
    model = models.build("mlp", 32, precision)
    assert {layer.dtype_policy.compute_dtype for layer in model.layers} == {dtype}
    assert {v.dtype for v in model.trainable_variables} == {"float32"}
    assert model(np.zeros((2, 28, 28), np.float32)).dtype == dtype


def test_float16_trains_with_a_loss_scale_optimizer_and_no_global_policy():
    import keras

    config = TrainConfig(precision="mixed_float16", **TINY)
    t = tf()
    model = models.build("mlp", 32, "mixed_float16")
    optimizer = make_optimizer(config)
    assert isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    rng = np.random.default_rng(0)
    x, y = t.constant(rng.random((60, 28, 28), np.float32)), t.constant(rng.integers(0, 10, 60).astype(np.int32))
    before = [v.numpy().copy() for v in model.trainable_variables]
    loss, _ = build_train_chunk(model, optimizer, x, y, 30, False)(t.range(60), t.constant(0), t.constant(2))
    assert np.isfinite(loss.numpy()) and model(x[:1]).dtype == "float16"
    assert any(not np.array_equal(b, v.numpy()) for b, v in zip(before, model.trainable_variables, strict=True))
    # The policy was the model's own: the next model, in the same process, is float32 again.
    assert keras.config.dtype_policy().name == "float32" and models.build("mlp", 32)(x[:1]).dtype == "float32"


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_xla_on_sets_and_records_jit_compile_in_every_execution_mode(execution):
    on = train(TrainConfig(execution=execution, xla="on", **{**TINY, "epochs": 1}), measurements=False)
    assert on.status == "completed", on.error
    assert on.device["jit_compile"] is True and on.config["xla"] == "on"
    off = train(TrainConfig(execution=execution, xla="off", **{**TINY, "epochs": 1}), measurements=False)
    assert off.device["jit_compile"] is False
    # Same batches, same weights: XLA changes how the step runs, not what it learns.
    assert on.epochs[0].train_loss == pytest.approx(off.epochs[0].train_loss, rel=1e-3)


def test_the_compare_command_runs_the_group_and_its_ratio_points_the_way_samples_per_second_do(tmp_path, capsys):
    from core.analysis import compare
    from core.history.store import Store

    db = str(tmp_path / "h.db")
    flags = [
        "--dataset",
        "synthetic",
        "--train-subset",
        "600",
        "--epochs",
        "2",
        "--model",
        "mlp",
        "--hidden-units",
        "32",
    ]
    assert main(["compare", "--axis", "batch_size", "--values", "20,60", *flags, "--db", db]) == 0
    out = capsys.readouterr().out
    runs = [Store(db).get(r.run_id) for r in Store(db).history()]
    runs.sort(key=lambda r: r.run_id)
    assert [r.run_id.rpartition("-")[2] for r in runs] == ["1", "2"]  # one group, in order
    shared = [{k: v for k, v in r.config.items() if k != "batch_size"} for r in runs]
    assert shared[0] == shared[1] and [r.config["batch_size"] for r in runs] == [20, 60]
    assert [c.to_dict() for c in Comparison("batch_size", "20,60").configs(runs[0].config)] == [r.config for r in runs]
    rates = [compare.throughput(r) for r in runs]
    row = next(line for line in out.splitlines() if line.startswith("batch 60"))
    assert f"{rates[1]:,.0f}" in row and f"{rates[1] / rates[0]:.2f}x" in row
    # Batch 60 trains 3x the samples per step: the ratio is of samples/s, as each epoch line prints them, not of steps.
    printed = [float(line.split()[-2].replace(",", "")) for line in out.splitlines() if line.startswith("epoch   2/2")]
    shown = float(row.split()[3].rstrip("x"))  # "batch 60  120,750  3.01x (2.90-3.12)"
    assert shown == pytest.approx(printed[1] / printed[0], rel=0.25)


COMPILES_ONCE = """
import sys
import numpy as np
import keras
import tensorflow as tf
from core.engine.step import build_train_chunk
x, y = tf.constant(np.random.rand(64, 4).astype(np.float32)), tf.constant(np.arange(64, dtype=np.int32) % 10)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(10, activation="softmax")])
optimizer = keras.optimizers.SGD(0.1)
chunk = build_train_chunk(model, optimizer, x, y, 8, True)
for start, count in [(0, 1), (1, 2), (0, 8), (3, 5)]:
    chunk(tf.range(64), tf.constant(start), tf.constant(count))[0].numpy()
"""


def test_an_xla_call_compiles_once_for_every_call_size_and_start(tmp_path):
    """The multi-step loop's call size adapts every call: with XLA, each size must not compile the program again.

    XLA writes each program it compiles to --xla_dump_to; four calls of different sizes leave one.
    """
    import os
    import subprocess
    import sys
    from pathlib import Path

    dump = tmp_path / "xla"
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={dump}", "CUDA_VISIBLE_DEVICES": ""}
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", COMPILES_ONCE], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    programs = {f.name.split(".")[0] for f in dump.iterdir() if "train_chunk" in f.name}
    assert len(programs) == 1, sorted(programs)
