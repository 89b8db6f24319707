"""core.machine.hardware_check: the hardware check in a subprocess, and which device modes it allows."""

from __future__ import annotations

import json
import sys

import pytest

from core.engine.devices import GPU_ADVICE
from core.engine.limits import LIMITS_ENV
from core.machine import hardware_check
from core.settings import device_modes
from core.settings.config import ConfigError

NO_GPU = hardware_check.Hardware(hardware_check.READY, host={"gpus": []})
TWO_GPUS = hardware_check.Hardware(
    hardware_check.READY,
    host={"gpus": [{"index": 0, "name": "NVIDIA H100"}, {"index": 1, "name": "NVIDIA L4"}]},
)
SETTINGS = {"dataset": "synthetic", "model": "softmax", "epochs": 2, "batch_size": 50, "train_subset": 500}


def test_a_given_answer_is_taken_with_its_limits_and_a_bad_one_runs_the_check(tmp_path, monkeypatch):
    # The session's answer (tests/conftest.py): the real check's output, once; here one of a machine with a GPU.
    host = {"hostname": "box", "gpus": [{"index": 0, "name": "NVIDIA L4"}], "limits": {"/GPU:0": {"peak_gflops": 9.0}}}
    answer, limits = tmp_path / "answer.json", tmp_path / "limits.json"
    answer.write_text(json.dumps(host), encoding="utf-8")
    monkeypatch.setenv(hardware_check.ANSWER_ENV, str(answer))
    monkeypatch.setenv(LIMITS_ENV, str(limits))
    never = [sys.executable, "-c", "import sys; sys.exit('the check ran')"]
    hw = hardware_check.Prober(command=never, shared=True).wait(20)
    assert hw.state == hardware_check.READY and hw.host == host and hw.gpus == host["gpus"]
    assert json.loads(limits.read_text(encoding="utf-8")) == host["limits"]  # where this server's runs read them
    # Only the process-wide prober takes it; a file that is not a check's answer is not taken either.
    assert hardware_check.Prober(command=never).wait(20).state == hardware_check.FAILED
    for bad in ("not json", "[1, 2]", json.dumps({"gpus": "none"})):
        answer.write_text(bad, encoding="utf-8")
        hw = hardware_check.Prober(command=never, shared=True).wait(20)
        assert hw.state == hardware_check.FAILED and "the check ran" in hw.message


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ([sys.executable, "-c", "import sys; sys.exit('cannot import tensorflow')"], "cannot import tensorflow"),
        ([sys.executable, "-c", "print('not json')"], "not JSON"),
        ([sys.executable, "-c", "print('[1, 2]')"], "unknown format"),
        (["/nonexistent/python"], "could not start"),
    ],
)
def test_a_failed_check_is_one_sentence_and_means_cpu_only(command, words):
    hw = hardware_check.Prober(command=command).wait(60)
    assert hw.state == hardware_check.FAILED
    assert words in hw.message and hw.message.endswith("so GPUs are off.")
    assert hw.gpus == []
    assert device_modes.unavailable(device_modes.modes(hw)[1], hw) == "the hardware check failed, so GPUs are off"


def test_a_check_that_hangs_is_given_up():
    hw = hardware_check.Prober(command=[sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5).wait(20)
    assert hw.state == hardware_check.FAILED and "did not answer within" in hw.message


def test_without_a_gpu_every_gpu_mode_is_listed_but_refused():
    modes = {m.key: m for m in device_modes.modes(NO_GPU)}
    assert list(modes) == ["cpu", "gpu:0", "cpu-vs-gpu", "fit:cpu", "executions:cpu"]
    for key in ("gpu:0", "cpu-vs-gpu"):
        assert device_modes.unavailable(modes[key], NO_GPU) == "no GPU found on this machine"
        with pytest.raises(ConfigError) as err:
            device_modes.plan(SETTINGS, key, NO_GPU)
        assert err.value.field == "device" and "no GPU found" in str(err.value)
    # While the check runs, GPU modes wait too; CPU modes never do.
    checking = hardware_check.Hardware(hardware_check.CHECKING)
    with pytest.raises(ConfigError, match="still checking for GPUs"):
        device_modes.plan(SETTINGS, "cpu-vs-gpu", checking)
    assert [c.device for c in device_modes.plan(SETTINGS, "cpu", checking)] == ["cpu"]


def test_compare_modes_submit_the_same_config_twice_differing_only_in_device_or_execution():
    cpu, gpu = device_modes.plan(SETTINGS, "cpu-vs-gpu", TWO_GPUS)
    assert (cpu.device, gpu.device) == ("cpu", "gpu:0")
    assert cpu.to_dict() | {"device": "gpu:0"} == gpu.to_dict()
    # On a CPU, one change at a time: plain fit, the loop, then XLA on the loop (auto would change two at once).
    plain, loop, xla = device_modes.plan(SETTINGS, "fit:cpu", NO_GPU)
    assert [(c.execution, c.xla) for c in (plain, loop, xla)] == [
        ("keras-fit", "off"),
        ("multi-step-loop", "off"),
        ("multi-step-loop", "on"),
    ]
    assert (
        plain.to_dict() | {"execution": "multi-step-loop"} == loop.to_dict()
        and loop.to_dict() | {"xla": "on"} == xla.to_dict()
    )
    # On a GPU, auto is on for both: the two differ in the execution only.
    fit, fast = device_modes.plan(SETTINGS, "fit:gpu:0", TWO_GPUS)
    assert fit.to_dict() | {"execution": "multi-step-loop"} == fast.to_dict() and fit.xla == "auto"
    # The three-way comparison: plain fit (the baseline) first, then steps_per_execution, then the loop.
    three = device_modes.plan(SETTINGS, "executions:cpu", NO_GPU)
    assert [c.execution for c in three] == ["keras-fit", "keras-fit-spe", "multi-step-loop"]
    assert all(c.to_dict() | {"execution": "keras-fit"} == three[0].to_dict() for c in three)
    # XLA as each resolves it is the same too: off for all three on a CPU (auto would turn it on for the loop alone).
    assert {c.xla for c in three} == {"off"}
    keys = [m.key for m in device_modes.modes(TWO_GPUS)]
    assert keys == ["cpu", "gpu:0", "gpu:1", "cpu-vs-gpu", "fit:cpu", "executions:cpu", "fit:gpu:0", "executions:gpu:0"]
    assert device_modes.modes(TWO_GPUS)[2].label == "GPU:1 · NVIDIA L4"


def test_bad_settings_and_unknown_modes_are_config_errors():
    with pytest.raises(ConfigError) as err:
        device_modes.plan({**SETTINGS, "batch_size": 600}, "cpu", NO_GPU)
    assert err.value.field == "batch_size"
    with pytest.raises(ConfigError, match="device mode must be one of"):
        device_modes.plan(SETTINGS, "tpu", NO_GPU)


def test_the_device_table_names_each_gpu_or_says_how_to_get_one():
    host = {"cpu_model": "AMD EPYC", "cpu_cores": 2, "tensorflow": "2.21.0", "keras": "3.15.1", "python": "3.11.7"}
    gpu = {"index": 0, "name": "NVIDIA H100", "compute_capability": "9.0", "memory_mb": 81_559}
    rows = dict(
        hardware_check.host_rows(
            hardware_check.Hardware(hardware_check.READY, host={**host, "cuda_build": "12.5.1", "gpus": [gpu]})
        )
    )
    assert rows["CPU"] == "AMD EPYC, 2 cores"
    assert rows["Built with"] == "CUDA 12.5.1"
    assert rows["GPU:0"] == "NVIDIA H100, compute capability 9.0, 81,559 MiB"
    rows = dict(hardware_check.host_rows(hardware_check.Hardware(hardware_check.READY, host={**host, "gpus": []})))
    assert rows["Built with"] == "none (CPU-only)"
    assert rows["GPU"] == f"none found. {GPU_ADVICE}"


def test_a_ray_nodes_devices_are_choices_whose_labels_name_its_host():
    box = {"hostname": "gpu-box.lan", "gpus": [{"index": 0, "name": "H100"}, {"index": 1, "name": "H100"}]}
    hw = hardware_check.Hardware(
        hardware_check.READY,
        host={"gpus": []},
        nodes=({"name": "gpu-box", "host": box, "message": ""}, {"name": "gone", "host": {}, "message": "lost"}),
    )
    by_key = {m.key: m for m in device_modes.modes(hw)}
    assert by_key["gpu-box/gpu:0"].label == "gpu-box/GPU:0 · H100 (Ray gives one of 2) · gpu-box.lan"
    assert "gpu-box/gpu:1" not in by_key  # Ray picks the GPU: the job sees it as gpu:0
    assert by_key["gpu-box/gpu:all"].runs == ({"device": "gpu-box/gpu:all", "execution": "keras-fit"},)
    versus = by_key["cpu-vs-gpu-box/gpu:0"]
    assert (
        versus.label == "CPU here vs gpu-box/GPU:0 · H100 (Ray gives one of 2) · gpu-box.lan"
        and device_modes.unavailable(versus, hw) is None
    )
    assert not [k for k in by_key if k.startswith("gone/")]  # a node that did not answer offers nothing
    configs = device_modes.plan({"dataset": "synthetic", "epochs": 1}, versus.key, hw)
    assert [c.device for c in configs] == ["cpu", "gpu-box/gpu:0"] and configs[1].node == "gpu-box"
    assert device_modes.plan({"dataset": "synthetic"}, "gpu-box/gpu:all", hw)[0].execution == "keras-fit"
    from ui import sweep_plan

    assert {"gpu-box/cpu", "gpu-box/gpu:0"} <= set(
        sweep_plan.sweep_devices(hw)
    ) and "gpu-box/gpu:all" not in sweep_plan.sweep_devices(hw)
