"""ui.charts: per-epoch tables in, Vega-Lite specs out (epoch on x, one series per run)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.config import TrainConfig
from core.results import EpochMetrics, RunResult
from ui import charts


def run(device: str, seconds: list[float], accuracy: list[float]) -> RunResult:
    """A RunResult with the given epoch times and test accuracies (train accuracy 1 point lower)."""
    result = RunResult(config={"device": device}, host={}, device={"label": device.upper()})
    for epoch, (sec, acc) in enumerate(zip(seconds, accuracy, strict=True), 1):
        result.epochs.append(EpochMetrics(epoch, 0.5, acc - 0.01, 0.5, acc, sec, 0.01, 1000 / sec, warmup=epoch == 1))
    return result


@pytest.fixture()
def frame() -> pd.DataFrame:
    cpu = run("cpu", [0.9, 0.4, 0.5], [0.70, 0.75, 0.78])
    gpu = run("gpu:0", [2.0, 0.1, 0.1], [0.71, 0.76, 0.79])
    return charts.epochs_frame([cpu.to_frame(), gpu.to_frame()], ["CPU", "GPU:0"])


def rows(spec: dict) -> list[dict]:
    """The chart's data rows (Altair puts them in the spec's datasets)."""
    (values,) = spec["datasets"].values()
    return values


def test_series_labels_name_the_device_and_tell_execution_modes_apart():
    cpu, gpu = TrainConfig(device="cpu"), TrainConfig(device="gpu:0")
    assert charts.series_labels([cpu, gpu]) == ["CPU", "GPU:0"]
    plain, loop = TrainConfig(execution="keras-fit"), TrainConfig(execution="multi-step-loop")
    assert charts.series_labels([plain, loop]) == ["CPU (plain fit)", "CPU (multi-step loop)"]
    # Names older versions wrote read as today's (core.config's aliases).
    assert charts.series_labels([TrainConfig(execution="keras-default"), TrainConfig(execution="fast")]) == [
        "CPU (plain fit)",
        "CPU (multi-step loop)",
    ]
    spe = TrainConfig(execution="keras-fit-spe")
    assert charts.series_labels([plain, spe]) == ["CPU (plain fit)", "CPU (fit, steps_per_execution)"]
    assert charts.series_labels([]) == []


def test_epochs_frame_keeps_every_epoch_of_every_run_and_skips_empty_runs(frame):
    assert sorted(set(frame["series"])) == ["CPU", "GPU:0"]
    assert len(frame) == 6
    empty = RunResult(config={"device": "gpu"}, host={}, device={}).to_frame()
    only_cpu = charts.epochs_frame([frame[frame.series == "CPU"], empty], ["CPU", "GPU"])
    assert set(only_cpu["series"]) == {"CPU"}
    assert len(charts.epochs_frame([empty], ["GPU"])) == 0


def test_accuracy_chart_puts_epoch_on_x_accuracy_on_y_and_one_colour_per_run(frame):
    spec = charts.accuracy_chart(frame, epochs_total=10).to_dict()
    enc = spec["encoding"]
    assert enc["x"]["field"] == "epoch" and enc["y"]["field"] == "accuracy"
    assert enc["color"]["field"] == "series"
    assert enc["color"]["scale"]["domain"] == ["CPU", "GPU:0"]
    # The x axis spans the whole run, so a live chart grows into it.
    assert enc["x"]["scale"]["domain"] == [1, 10]
    data = rows(spec)
    # Train and test per epoch per run, with the values from the table.
    assert len(data) == 12
    assert {(r["series"], r["data"]) for r in data} == {(s, d) for s in ("CPU", "GPU:0") for d in ("Train", "Test")}
    gpu_test = [r["accuracy"] for r in data if r["series"] == "GPU:0" and r["data"] == "Test"]
    assert gpu_test == pytest.approx([0.71, 0.76, 0.79])


def test_epoch_time_chart_groups_bars_by_run_and_marks_the_warmup_epoch(frame):
    spec = charts.epoch_time_chart(frame, epochs_total=3).to_dict()
    bars, note = spec["layer"]
    enc = bars["encoding"]
    assert enc["x"]["field"] == "epoch" and enc["y"]["field"] == "seconds"
    assert enc["xOffset"]["field"] == "series" and enc["color"]["field"] == "series"
    assert enc["opacity"]["condition"]["test"] == "datum.warmup"
    assert "warm-up" in enc["x"]["axis"]["labelExpr"]
    assert note["mark"]["type"] == "text" and "includes compilation" in note["encoding"]["text"]["value"]
    assert {"filter": "datum.warmup"} in note["transform"]
    data = rows(spec)
    assert [r["seconds"] for r in data if r["series"] == "GPU:0"] == [2.0, 0.1, 0.1]
    assert [r["warmup"] for r in data if r["series"] == "CPU"] == [True, False, False]
    # The y axis has room above the tallest bar (the warm-up note sits there).
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1] > 2.0


def test_charts_of_no_epochs_still_build(frame):
    empty = frame.iloc[0:0]
    assert charts.accuracy_chart(empty, epochs_total=3).to_dict()["encoding"]["x"]["field"] == "epoch"
    assert charts.epoch_time_chart(empty).to_dict()["layer"][0]["encoding"]["y"]["field"] == "seconds"


def test_fonts_are_large_enough_for_a_projector(frame):
    config = charts.accuracy_chart(frame).to_dict()["config"]
    assert config["axis"]["labelFontSize"] >= 14 and config["axis"]["titleFontSize"] >= 16
    assert config["legend"]["labelFontSize"] >= 14
