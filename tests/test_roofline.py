"""The roofline model (core.analysis.roofline) on constructed cases and on real runs; bandwidth and step floor measured
once."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from core.analysis import compare, roofline, why
from core.engine import floor, peak, shapes
from core.engine.training import train
from core.settings.config import TrainConfig

TINY = dict(dataset="synthetic", train_subset=400, batch_size=50, epochs=3)


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
    info, found = result.device, result.measured
    assert (
        info["steps_per_epoch"] == 8 and found.limits.bandwidth_gbs > 0 and len(found.limits.peak_tries) == peak.TRIES
    )
    assert found.limits.peak_gflops == pytest.approx(sorted(found.limits.peak_tries)[peak.TRIES // 2])  # the median
    assert info["train_bytes_per_sample"] == pytest.approx(info["sample_bytes"] + info["step_bytes"] / 50)
    # 4 x 50 would not fit 400 samples: batch 12, and between it and the run's 50, batch 24; a round each steady epoch.
    assert found.fit.batch == 12 and found.check.batch == 24 and len(found.fit.rounds) == len(found.check.rounds) == 2
    point = roofline.run_point(result, "CPU")
    assert point.intensity == pytest.approx(info["train_flops_per_sample"] / info["train_bytes_per_sample"])
    # At the run's steady throughput, the one speed measure.
    assert point.gflops == pytest.approx(info["train_flops_per_sample"] * compare.throughput(result) / 1e9)
    assert point.batch_size == 50
    w = why.explain(result)
    assert w.line.points[1][0] == 50 and w.line.points[1][1] == why.step_pace(result) and w.prediction.batch == 24


def test_a_failed_measurement_leaves_the_run_intact_and_says_not_measured(monkeypatch):
    from core.engine import limits

    def fails(*args, **kwargs):
        raise RuntimeError("no bandwidth today")

    monkeypatch.delenv(limits.LIMITS_ENV, raising=False)  # this process measures, not a page's server check
    monkeypatch.setattr(peak, "_bandwidth_cache", {})
    monkeypatch.setattr(peak, "bandwidth_benchmark", fails)
    monkeypatch.setattr(shapes, "_cache", {})
    monkeypatch.setattr(shapes, "benchmark", fails)
    result = train(TrainConfig(**TINY))
    assert result.status == "completed" and len(result.epochs) == 3
    assert result.measured.limits.bandwidth_gbs is None and result.measured.shapes.sample_seconds is None
    floors = why.explain(result).floors
    assert floors.memory is None and floors.products is None and floors.peak is not None
    from ui.roofline import limits_text

    assert "bandwidth not measured" in limits_text(result)


def test_each_run_is_its_own_dot_in_its_run_s_colour_and_legend():
    from ui.roofline import roofline_chart

    cpu = roofline.roof("CPU", {"peak_gflops": 200.0, "bandwidth_gbs": 25.0})
    points = [roofline.Point("CPU", "mlp", 100, 2.0, 20.0, 5e4), roofline.Point("CPU", "mlp", 100, 2.0, 90.0, 2e5)]
    runs = ["CPU (plain fit)", "CPU (multi-step loop, XLA)"]
    spec = roofline_chart([cpu], points, runs, ["#0072B2", "#D55E00"]).to_dict()
    dot = spec["layer"][0]["encoding"]["color"]
    assert dot["field"] == "run" and dot["scale"] == {"domain": runs, "range": ["#0072B2", "#D55E00"]}
    assert "color" not in spec["layer"][1]["encoding"]  # the roofs are grey, told apart by their dash


def test_runs_of_one_server_use_its_figures_and_a_run_that_measures_otherwise_says_so(tmp_path, monkeypatch):
    from core.engine import limits
    from ui.roofline import limits_note

    # The server's check measured this machine as ten times faster than it is (another process had it to itself).
    shared = tmp_path / "limits.json"
    limits.write(
        str(shared),
        {
            "/CPU:0": {
                "peak_gflops": 5_000.0,
                "peak_tries": [4_900.0, 5_000.0, 5_100.0],
                "bandwidth_gbs": 200.0,
                "bandwidth_tries": [199.0, 200.0, 201.0],
            }
        },
    )
    monkeypatch.setenv(limits.LIMITS_ENV, str(shared))
    first, second = train(TrainConfig(**TINY)), train(TrainConfig(**TINY, execution="keras-fit"))
    for r in (first, second):
        assert r.measured.limits.peak_gflops == 5_000.0 and r.measured.limits.bandwidth_gbs == 200.0
        assert r.measured.limits.peak_source == "server" and 0 < r.measured.limits.own_peak_gflops < 5_000.0 * 0.8
    note = limits_note(first)
    assert note.startswith("its own measurement of the peak just before it, ") and "below the 5,000 GFLOP/s" in note
    assert "5,000 GFLOP/s (its 3 tries: 4,900-5,100) this server" in note
    assert note.endswith("the machine was busier then, so this run's share of peak reads low.")
    near = replace(
        first, measured=replace(first.measured, limits=replace(first.measured.limits, own_peak_gflops=4_500.0))
    )
    assert limits_note(near) is None  # 10% off, within the floor: nothing to say
    wide = replace(near.measured.limits, peak_tries=(3_000.0, 5_000.0, 7_000.0), own_peak_gflops=3_500.0)
    assert limits_note(replace(near, measured=replace(near.measured, limits=wide))) is None  # within its spread
    above = replace(near.measured.limits, own_peak_gflops=6_000.0)
    assert limits_note(replace(near, measured=replace(near.measured, limits=above))).endswith(
        "share of peak reads high."
    )
