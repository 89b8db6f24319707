"""On a machine with a GPU (make gpu-check): placement, memory growth, XLA, out of memory, the peak, Stop.

Marked gpu: left out of a plain `pytest` (tests/conftest.py) and run by `pytest -m gpu`, where each test
fails, never skips, when TensorFlow finds no GPU: a GPU check that passes without a GPU checks nothing.
"""

from __future__ import annotations

import threading
import time

import pytest

from core.engine import peak
from core.engine.job import run_job
from core.engine.tf_setup import tf
from core.engine.training import train
from core.results import RunResult
from core.settings.config import TrainConfig

pytestmark = pytest.mark.gpu
TINY = dict(dataset="synthetic", model="mlp", train_subset=2_000, batch_size=100, epochs=2, device="gpu")


@pytest.fixture(scope="module")
def gpus():
    found = tf().config.list_physical_devices("GPU")
    if not found:
        pytest.fail('no GPU found: TensorFlow lists none (pip install "tensorflow[and-cuda]" and an NVIDIA driver).')
    return found


def test_variables_live_on_the_gpu_and_xla_auto_is_on_there(gpus):
    result = train(TrainConfig(**TINY))
    assert result.status == "completed", result.error
    assert result.device["variables_on"] == "GPU:0" and result.device["tf_device"] == "/GPU:0"
    assert result.device["jit_compile"] is True and result.config["xla"] == "auto"


def test_memory_growth_is_set_on_every_gpu(gpus):
    assert all(tf().config.experimental.get_memory_growth(g) for g in gpus)


def test_mixed_precision_runs_on_the_gpu_in_its_compute_dtype(gpus):
    result = train(TrainConfig(**TINY, precision="mixed_float16", execution="keras-fit"))
    assert result.status == "completed", result.error
    assert result.device["compute_dtype"] == "float16" and result.measured.limits.peak_dtype == "float16"


def test_an_out_of_memory_batch_is_one_sentence(gpus):
    sentence = "Out of memory on gpu with batch size 65536 and model mlp; try a smaller batch size or model."

    def work():
        with tf().device("/GPU:0"):
            tf().zeros((2**40,), dtype=tf().float32)  # 4 TiB: more than any GPU holds

    result = run_job(RunResult(config={}, host={}, device={}), work, sentence)
    assert result.status == "failed" and result.error == sentence


def test_the_gpu_peak_is_measured_and_beats_the_cpu(gpus):
    gpu, cpu = peak.measure("/GPU:0"), peak.measure("/CPU:0")
    assert gpu.gflops > cpu.gflops > 0
    assert peak.measure("/GPU:0", "bfloat16").dtype == "bfloat16"


def test_stop_lands_within_a_second(gpus):
    asked: list[float] = []
    config = TrainConfig(**{**TINY, "train_subset": 60_000, "batch_size": 32, "epochs": 50})
    threading.Timer(5.0, lambda: asked.append(time.perf_counter())).start()
    result = train(config, should_stop=lambda: bool(asked))
    stopped = time.perf_counter()
    assert result.status == "cancelled" and asked
    assert stopped - asked[0] < 1.0, f"Stop took {stopped - asked[0]:.2f} s"
