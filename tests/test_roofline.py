"""The roofline model (core.roofline) on constructed cases and on real runs; bandwidth and step floor measured once."""

from __future__ import annotations

import math

import pytest

from core import roofline
from core.config import TrainConfig
from core.engine import floor, peak
from core.engine.training import train

TINY = dict(dataset="synthetic", train_subset=400, batch_size=50, epochs=3)


def breakdown(epoch: float, steps: int, flops_per_sample: float, bytes_per_sample: float, floor_s: float):
    return roofline.epoch_breakdown(epoch, steps, 100, flops_per_sample, bytes_per_sample, 200.0, 25.0, floor_s)


def test_the_bound_sentence_names_overhead_memory_or_compute_by_the_largest_part():
    # The case: 600 steps of 3.1 MFLOP with a 150 us floor: overhead 0.09 s of a 0.15 s epoch.
    over = breakdown(0.15, 600, 31_380, 4_158, 150e-6)
    assert over.bound == "overhead" and over.overhead == pytest.approx(0.09)
    assert roofline.bound_sentence(over) == (
        "overhead-bound: 600 steps of 3.1 MFLOP; the step floor alone is 0.09 s of the 0.15 s epoch. "
        "A larger batch helps; a GPU will not."
    )
    # 1 FLOP per byte at 25 GB/s: memory takes 8x the compute at 200 GFLOP/s.
    mem = breakdown(1.0, 600, 100_000, 100_000, 1e-6)
    assert mem.bound == "memory" and mem.memory == pytest.approx(600 * 100 * 100_000 / 25e9)
    assert roofline.bound_sentence(mem).startswith("memory-bound: 6.0 GB per epoch at 25 GB/s take 0.24 s of the 1.0 s")
    comp = breakdown(20.0, 600, 50_000_000, 100_000, 1e-6)
    assert comp.bound == "compute" and comp.compute == pytest.approx(600 * 100 * 50e6 / 200e9)
    assert roofline.bound_sentence(comp).startswith("compute-bound: 600 steps of 5.0 GFLOP at the 200 GFLOP/s peak")
    # The rest is kept, not forced to zero: negative where the parts overlap by more than the epoch.
    assert over.rest == pytest.approx(0.15 - over.compute - over.memory - over.overhead)
    assert breakdown(0.001, 600, 31_380, 4_158, 150e-6).rest < 0


def test_roofs_come_from_the_measured_peak_and_bandwidth():
    r = roofline.roof("CPU", {"peak_gflops": 200.0, "bandwidth_gbs": 25.0})
    assert r.ridge == pytest.approx(8.0)
    assert r.attainable(1.0) == pytest.approx(25.0) and r.attainable(100.0) == pytest.approx(200.0)
    unmeasured = roofline.roof("CPU", {"peak_gflops": 200.0, "bandwidth_gbs": None})
    assert unmeasured.ridge is None and unmeasured.attainable(1.0) == 200.0
    assert roofline.roof("CPU", {"bandwidth_gbs": float("nan")}).bandwidth_gbs is None


def test_bandwidth_and_step_floor_are_positive_finite_and_measured_once_per_process():
    first = peak.measure_bandwidth("/CPU:0")
    assert 0 < first.gbs < 10_000 and math.isfinite(first.gbs)
    assert peak.measure_bandwidth("/CPU:0") is first  # the second call reuses it
    seconds = floor.measure("/CPU:0", "multi-step-loop", False)
    assert 0 < seconds < 1 and math.isfinite(seconds)
    assert floor.measure("/CPU:0", "multi-step-loop", False) == seconds
    assert floor._cache[("/CPU:0", "multi-step-loop", False)] == seconds


def test_a_run_records_its_figures_and_lands_on_the_roofline():
    result = train(TrainConfig(**TINY, execution="keras-fit"))
    assert result.status == "completed", result.error
    info = result.device
    assert info["steps_per_epoch"] == 8 and info["bandwidth_gbs"] > 0 and info["step_floor_seconds"] > 0
    assert info["train_bytes_per_sample"] == pytest.approx(info["sample_bytes"] + info["step_bytes"] / 50)
    point = roofline.run_point(result, "CPU")
    assert point.intensity == pytest.approx(info["train_flops_per_sample"] / info["train_bytes_per_sample"])
    steady = sorted(e.gflops_per_second for e in result.steady_epochs())
    assert point.gflops == pytest.approx(sum(steady) / 2) and point.batch_size == 50
    b = roofline.run_breakdown(result)
    assert b.epoch_seconds == result.median_epoch_seconds() and b.overhead == pytest.approx(
        8 * info["step_floor_seconds"]
    )
    assert roofline.bound_sentence(b).startswith(f"{b.bound}-bound: ")


def test_a_failed_measurement_leaves_the_run_intact_and_says_not_measured(monkeypatch):
    def fails(*args):
        raise RuntimeError("no bandwidth today")

    monkeypatch.setattr(peak, "_bandwidth_cache", {})
    monkeypatch.setattr(peak, "bandwidth_benchmark", fails)
    monkeypatch.setattr(floor, "_cache", {})
    monkeypatch.setattr(floor, "benchmark", fails)
    result = train(TrainConfig(**TINY))
    assert result.status == "completed" and len(result.epochs) == 3
    assert result.device["bandwidth_gbs"] is None and result.device["step_floor_seconds"] is None
    b = roofline.run_breakdown(result)
    assert b.memory is None and b.overhead is None and b.bound == "compute"
    assert roofline.seconds(b.memory) == "not measured"
    from ui.roofline import limits_text

    assert limits_text(result.device).endswith("bandwidth not measured · step floor not measured")
