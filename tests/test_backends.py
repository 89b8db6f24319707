"""Backends without CUDA assumed: GPU detection fed Apple's tensorflow-metal PluggableDevice description."""

from __future__ import annotations

import pytest

from core.engine import devices
from core.engine.executions import jit_compile_for
from core.machine import backends, hardware_check
from core.settings import device_modes
from core.settings.axes import Comparison
from core.settings.config import ConfigError

# What TensorFlow says of a GPU on a Mac with tensorflow-metal: get_device_details names it "METAL" and
# nothing else; the build has no CUDA.
METAL_DETAILS, MAC_BUILD, MAC = {"device_name": "METAL"}, {"is_cuda_build": False}, "macOS-14.4-arm64-arm-64bit"
SETTINGS = {"dataset": "synthetic", "model": "mlp", "train_subset": 300, "batch_size": 30, "epochs": 2}


@pytest.fixture()
def mac():
    gpu = devices.gpu_info(0, METAL_DETAILS, MAC_BUILD, MAC)
    host = {"platform": MAC, "cuda_build": None, "cpu_model": "Apple M2", "gpus": [gpu.__dict__]}
    return gpu, hardware_check.Hardware(hardware_check.READY, host=host)


def test_a_metal_gpu_is_found_as_metal_not_cuda(mac):
    gpu, hw = mac
    assert gpu.backend == "metal" and gpu.compute_capability is None and gpu.memory_mb is None
    rows = dict(hardware_check.host_rows(hw))
    assert rows["Built with"] == "no CUDA; the GPU is a PluggableDevice"
    assert rows["GPU:0"] == "METAL (Apple GPU (tensorflow-metal))"
    # A CUDA GPU's description is still CUDA.
    l4 = devices.gpu_info(0, {"device_name": "NVIDIA L4", "compute_capability": (8, 9)}, {}, "Linux")
    assert l4.backend == "cuda"


def test_a_file_written_before_the_backend_was_named_so_still_reads_its_gpus_kind():
    """Run files before 2026-12 store a GPU's backend as gpus[].kind: a Metal GPU there is still Metal, not CUDA."""
    old = {"platform": "Linux", "cuda_build": "12.5", "gpus": [{"index": 0, "name": "Apple M2", "kind": "metal"}]}
    assert backends.backend_of("gpu:0", old)[0].name == "metal"
    new = {"gpus": [{"index": 0, "name": "Apple M2", "backend": "metal", "kind": "cuda"}]}  # the new key wins
    assert backends.backend_of("gpu:0", new)[0].name == "metal"


def test_on_metal_xla_auto_means_off_and_xla_on_is_refused_in_one_sentence(mac):
    _, hw = mac
    assert jit_compile_for("gpu:0", "mlp", "auto", hw.host) is False
    assert jit_compile_for("cpu", "mlp", "on", hw.host) is True  # XLA compiles for the Mac's CPU
    (config,) = device_modes.plan({**SETTINGS, "xla": "auto"}, "gpu:0", hw)
    assert config.device == "gpu:0"
    with pytest.raises(ConfigError) as refused:
        device_modes.plan(SETTINGS, "gpu:0", hw, Comparison("xla", ("off", "on")))
    assert str(refused.value) == (
        "xla on is not possible on GPU:0: XLA does not compile for Apple GPU (tensorflow-metal); use auto or off."
    )
    with pytest.raises(ConfigError, match="mixed_bfloat16 cannot run on GPU:0: Apple's GPU runs precision"):
        device_modes.plan({**SETTINGS, "precision": "mixed_bfloat16"}, "gpu:0", hw)


def test_a_cuda_gpu_takes_xla_auto_as_on_and_a_cpu_as_off():
    host = {"cuda_build": "12.5", "gpus": [{"index": 0, "name": "NVIDIA H100", "compute_capability": "9.0"}]}
    assert jit_compile_for("gpu:0", "cnn", "auto", host) is True
    assert jit_compile_for("cpu", "cnn", "auto", host) is False
    assert backends.check("gpu:0", "mixed_bfloat16", "on", host) is True


@pytest.mark.parametrize(
    ("execution", "model", "expected"),
    [
        ("multi-step-loop", "softmax", True),
        ("multi-step-loop", "mlp", True),
        ("multi-step-loop", "cnn", False),
        ("keras-fit", "softmax", False),
        ("keras-fit-spe", "mlp", False),
        (None, "mlp", False),
    ],
)
def test_xla_auto_on_a_cpu_is_on_only_where_xla_compiles_the_whole_loop_of_a_dense_model(execution, model, expected):
    assert jit_compile_for("cpu", model, "auto", {}, execution) is expected
    assert jit_compile_for("node-b/cpu", model, "auto", {}, execution) is expected  # a Ray node's CPU too
    # What is asked for explicitly is what runs, in every mode.
    assert jit_compile_for("cpu", model, "off", {}, execution) is False
    assert jit_compile_for("cpu", model, "on", {}, execution) is True


@pytest.mark.parametrize(
    ("axis", "values", "says"),
    [
        ("precision", "float32,float64", "precision values must each be one of float32, mixed_float16, mixed_bfloat16"),
        ("device", "cpu", "values must list 2 to 4 device values, not 1."),
        ("device", "gpu,gpu:0", "values lists device gpu:0 twice"),
        ("speed", "1,2", "axis must be one of device, execution, precision, xla, batch_size, hidden_units"),
    ],
)
def test_a_bad_comparison_is_one_sentence(axis, values, says):
    with pytest.raises(ConfigError) as refused:
        Comparison(axis, values)
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_float16_on_a_cpu_is_said_to_be_slow_before_it_runs_not_refused():
    assert "many times slower" in backends.slow_note("cpu", "mixed_float16", {})
    assert backends.slow_note("cpu", "mixed_bfloat16", {}) is None
    assert backends.check("cpu", "mixed_float16", "auto", {}) is False  # it runs, XLA off as auto means on a CPU
