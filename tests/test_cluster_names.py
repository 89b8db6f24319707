"""What a Ray node's job sends back is named as the user asked ('node-b/cpu'), while the job keeps its own names."""

from __future__ import annotations

from core.cluster import remote
from core.config import SweepConfig, TrainConfig
from core.results import RunResult, SweepPoint, SweepResult


def test_a_sweeps_points_and_devices_go_back_under_the_nodes_device_names_and_the_job_keeps_its_own():
    config = SweepConfig(devices="node-b/cpu", batch_sizes=(32,), steps=5, repeats=1)
    assert remote.local_config(config).devices == ("cpu",)
    point = SweepPoint(device="cpu", batch_size=32, steps=5, samples_per_second=1.0, samples_per_second_min=1.0,
                       samples_per_second_max=1.0)  # fmt: skip
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
