"""What a Ray node's job sends back is named as the user asked ('node-b/cpu'), while the job keeps its own names."""

from __future__ import annotations

import pytest

from core.results import RunResult, SweepPoint, SweepResult
from core.runner import remote
from core.settings.config import SweepConfig, TrainConfig


def test_a_sweeps_points_and_devices_go_back_under_the_nodes_device_names_and_the_job_keeps_its_own():
    config = SweepConfig(devices="node-b/cpu", batch_sizes=(32,), steps=5, repeats=1)
    assert remote.local_config(config).devices == ("cpu",)
    point = SweepPoint(
        device="cpu",
        batch_size=32,
        steps=5,
        samples_per_second=1.0,
        samples_per_second_min=1.0,
        samples_per_second_max=1.0,
    )
    live = SweepResult(
        config=remote.local_config(config).to_dict(), devices={"cpu": {"requested": "cpu"}}, points=[point]
    )
    shown = remote.as_asked(live, config, {"node": "node-b", "node_id": "abc"})
    assert list(shown.devices) == ["node-b/cpu"] and shown.points[0].device == "node-b/cpu"
    assert shown.config["devices"] == ["node-b/cpu"]
    assert list(live.devices) == ["cpu"] and live.points[0].device == "cpu"  # the running sweep looks these up


def test_a_runs_device_info_names_the_node_and_its_host():
    config = TrainConfig(device="node-b/gpu:0")
    live = RunResult(config={}, host={"hostname": "gpu-box"}, device={"requested": "gpu:0", "variables_on": "GPU:0"})
    shown = remote.as_asked(live, config, {"node": "node-b", "node_id": "abc"})
    assert shown.device["label"] == "NODE-B/GPU:0 on gpu-box" and shown.device["requested"] == "node-b/gpu:0"
    assert shown.device["node_id"] == "abc" and live.device["requested"] == "gpu:0"


def test_a_node_gpu_is_the_one_ray_gives_and_a_node_without_one_is_said():
    from core.cluster.connect import ClusterError
    from core.cluster.nodes import Node

    box = Node(node_id="ab" * 28, name="gpu-box", address="10.0.0.5", cpus=32, gpus=2)
    assert remote._resources(box, TrainConfig(device="gpu-box/gpu:0")) == {"num_cpus": 1, "num_gpus": 1}
    assert remote._resources(box, TrainConfig(device="gpu-box/gpu:all", execution="keras-fit"))["num_gpus"] == 2
    assert remote._resources(box, TrainConfig(device="gpu-box/cpu")) == {"num_cpus": 32, "num_gpus": 0}
    with pytest.raises(ClusterError, match="must be gpu-box/gpu:0 .* or gpu-box/gpu:all, not gpu:1"):
        remote._resources(box, TrainConfig(device="gpu-box/gpu:1"))
    with pytest.raises(ClusterError, match="The Ray node laptop has no GPU"):
        remote._resources(Node("cd" * 28, "laptop", "10.0.0.6", 8, 0), TrainConfig(device="laptop/gpu"))


def test_a_sweep_on_a_node_is_a_file_the_history_imports():
    from core.history.checks import check_schema

    config = SweepConfig(devices="node-b.example.org/cpu", batch_sizes=(32,), steps=5, repeats=1)
    point = SweepPoint(
        device="cpu",
        batch_size=32,
        steps=5,
        samples_per_second=1.0,
        samples_per_second_min=1.0,
        samples_per_second_max=1.0,
    )
    live = SweepResult(config=remote.local_config(config).to_dict(), devices={}, points=[point], status="completed")
    check_schema("sweep", remote.as_asked(live, config, {}).to_dict())
