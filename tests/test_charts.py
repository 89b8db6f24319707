"""ui.charts: per-epoch tables in, Vega-Lite specs out (epoch on x, one series per run)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.results import EpochMetrics, RunResult
from core.settings.config import TrainConfig
from ui import chart_aids, chart_axes, charts
from ui.labels import series_labels


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
    """The chart's data rows (Altair puts them in the spec's datasets; the runs' is the largest, the hover
    readout's has a row per x position)."""
    return max(spec["datasets"].values(), key=len)


def test_series_labels_name_the_device_and_tell_execution_modes_apart():
    cpu, gpu = TrainConfig(device="cpu"), TrainConfig(device="gpu:0")
    assert series_labels([cpu, gpu]) == ["CPU", "GPU:0"]
    plain, loop = TrainConfig(execution="keras-fit"), TrainConfig(execution="multi-step-loop")
    # The loop's xla auto resolves to XLA on a CPU (a dense model), plain fit's to none: the label says so.
    assert series_labels([plain, loop]) == ["CPU (plain fit)", "CPU (multi-step loop, XLA)"]
    off = TrainConfig(execution="multi-step-loop", xla="off")
    assert series_labels([plain, off]) == ["CPU (plain fit, XLA auto)", "CPU (multi-step loop, XLA off)"]
    # Names older versions wrote read as today's (core.settings.config's aliases).
    assert series_labels([TrainConfig(execution="keras-default"), TrainConfig(execution="fast")]) == [
        "CPU (plain fit)",
        "CPU (multi-step loop, XLA)",
    ]
    spe = TrainConfig(execution="keras-fit-spe")
    assert series_labels([plain, spe]) == ["CPU (plain fit)", "CPU (fit, steps_per_execution)"]
    assert series_labels([]) == []


def test_epochs_frame_keeps_every_epoch_of_every_run_and_skips_empty_runs(frame):
    assert sorted(set(frame["series"])) == ["CPU", "GPU:0"]
    assert len(frame) == 6
    empty = RunResult(config={"device": "gpu"}, host={}, device={}).to_frame()
    only_cpu = charts.epochs_frame([frame[frame.series == "CPU"], empty], ["CPU", "GPU"])
    assert set(only_cpu["series"]) == {"CPU"}
    assert len(charts.epochs_frame([empty], ["GPU"])) == 0


def test_accuracy_chart_puts_epoch_on_x_accuracy_on_y_and_one_colour_per_run(frame):
    spec = charts.accuracy_chart(frame, epochs_total=10).to_dict()
    enc = spec["layer"][0]["encoding"]
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
    # Hovering an epoch reads every run there, each in its own line of the tooltip, named as in the legend.
    hover = spec["layer"][1]
    assert hover["mark"]["type"] == "rule" and [t["title"] for t in hover["encoding"]["tooltip"]] == [
        "Epoch",
        "CPU",
        "GPU:0",
    ]
    (readout,) = [v for v in spec["datasets"].values() if len(v) == 10]  # one row per epoch of the axis
    assert readout[1]["run_1"] == "75.0% training · 76.0% test" and readout[9]["run_0"] == "77.0% training · 78.0% test"


def test_smoothing_is_tensorboards_debiased_moving_average_of_the_training_curve_only(frame):
    assert chart_aids.smooth([0.5, 0.5, 0.5], 0.9) == pytest.approx([0.5, 0.5, 0.5])  # no pull towards 0
    assert chart_aids.smooth([1.0, 0.0], 0.5) == pytest.approx([1.0, 1 / 3])  # (0.25 + 0) / (1 - 0.25)
    assert list(chart_aids.smooth([0.2, 0.9], 0.0)) == [0.2, 0.9]
    data = rows(charts.accuracy_chart(frame, smoothing=0.6).to_dict())
    cpu_train = [r["accuracy"] for r in data if r["series"] == "CPU" and r["data"] == "Train"]
    cpu_test = [r["accuracy"] for r in data if r["series"] == "CPU" and r["data"] == "Test"]
    assert cpu_train == pytest.approx(list(chart_aids.smooth([0.69, 0.74, 0.77], 0.6))) and cpu_train[2] < 0.77
    assert cpu_test == pytest.approx([0.70, 0.75, 0.78])  # measured points stay as measured


def test_epoch_time_chart_groups_bars_by_run_and_marks_the_warmup_epoch(frame):
    spec = charts.epoch_time_chart(frame, epochs_total=3).to_dict()
    (bars,) = spec["layer"]
    enc = bars["encoding"]
    assert enc["x"]["field"] == "epoch" and enc["y"]["field"] == "seconds"
    assert enc["xOffset"]["field"] == "series" and enc["color"]["field"] == "series"
    assert enc["opacity"]["condition"]["test"] == "datum.warmup"
    assert "warm-up" in enc["x"]["axis"]["labelExpr"]
    data = rows(spec)
    assert {r["phase"] for r in data if r["warmup"]} == {"warm-up (epoch 1 includes compilation)"}  # its tooltip
    assert [r["seconds"] for r in data if r["series"] == "GPU:0"] == [2.0, 0.1, 0.1]
    assert [r["warmup"] for r in data if r["series"] == "CPU"] == [True, False, False]
    # The tallest bar inside the plot, clear of its top; the legend above the plot, not in room left over the bars.
    assert 2.0 < spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1] <= 2.0 * 1.1
    assert enc["color"]["legend"]["orient"] == "top"


def test_charts_of_no_epochs_still_build(frame):
    empty = frame.iloc[0:0]
    assert charts.accuracy_chart(empty, epochs_total=3).to_dict()["layer"][0]["encoding"]["x"]["field"] == "epoch"
    race = charts.race_frame([[], []], ["CPU", "GPU:0"])
    assert charts.race_chart(race).to_dict()["layer"][0]["encoding"]["x"]["field"] == "seconds"
    assert charts.epoch_time_chart(empty).to_dict()["layer"][0]["encoding"]["y"]["field"] == "seconds"


def test_fonts_are_large_enough_for_a_projector(frame):
    config = charts.accuracy_chart(frame).to_dict()["config"]
    assert config["axis"]["labelFontSize"] >= 14 and config["axis"]["titleFontSize"] >= 16
    assert config["legend"]["labelFontSize"] >= 14


def test_series_labels_name_every_compared_setting_so_no_two_runs_read_alike():
    small, big = TrainConfig(batch_size=100), TrainConfig(batch_size=256)
    assert series_labels([small, big]) == ["CPU (batch 100)", "CPU (batch 256)"]
    both = TrainConfig(batch_size=256, execution="keras-fit")
    assert series_labels([small, both]) == ["CPU (multi-step loop, XLA, batch 100)", "CPU (plain fit, batch 256)"]
    labels = series_labels([TrainConfig(execution="keras-fit"), both])
    assert labels == ["CPU (batch 100)", "CPU (batch 256)"]


@pytest.mark.parametrize("low, high", [(0.80, 0.815), (0.80, 0.95), (0.8123, 0.8131), (0.5, 0.5), (0.1, 0.9)])
def test_accuracy_ticks_are_distinct_labels_whatever_the_range_and_the_axis_holds_every_point(low, high):
    """'81% 81% 80% 80%' came from whole-percent labels on ticks half a point apart."""
    frame = pd.DataFrame(
        {
            "series": ["CPU", "CPU"],
            "epoch": [1, 2],
            "test_accuracy": [low, high],
            "train_accuracy": [low, high],
            "train_seconds": [1.0, 1.0],
            "warmup": [True, False],
        }
    )
    y = charts.accuracy_chart(frame).to_dict()["layer"][0]["encoding"]["y"]
    decimals = int(y["axis"]["format"][1:-1].lstrip("."))
    labels = [f"{t:.{decimals}%}" for t in y["axis"]["values"]]
    assert len(set(labels)) == len(labels) >= 1 and len(labels) <= chart_axes.MOST_TICKS + 1
    bottom, top = y["scale"]["domain"]
    assert bottom <= low and high < top <= 1.0  # every point inside, the highest clear of the plot's top edge
    assert all(bottom <= t <= top for t in y["axis"]["values"])


def test_the_target_is_a_tick_of_its_own_and_no_tick_crowds_it():
    values = chart_axes.ticks(0.80, 0.88, target=0.85)
    assert 0.85 in values and 0.80 in values
    assert all(abs(v - 0.85) >= 0.08 / 6 for v in values if v != 0.85)
    assert chart_axes.ticks(0.80, 0.88, target=0.95) == chart_axes.ticks(0.80, 0.88)  # off the axis: no tick


def test_the_legend_goes_on_one_row_where_its_labels_are_short_else_one_a_row():
    assert chart_axes.legend(["CPU", "GPU:0"]).to_dict()["columns"] == 2
    assert chart_axes.legend(["CPU (plain fit)", "CPU (multi-step loop, XLA)"]).to_dict()["columns"] == 1
    assert chart_axes.legend(["CPU（普通 model.fit）", "CPU（多步循环，XLA）"]).to_dict()["columns"] == 1  # wide glyphs


def test_race_chart_puts_training_seconds_on_x_with_every_call_and_a_target_line():
    from core.analysis import compare
    from core.results import CallPoint

    result = RunResult(config={"device": "cpu"}, host={}, device={})
    elapsed = 0.0
    for epoch in (1, 2):
        calls = []
        for k in range(1, 5):
            calls.append(CallPoint(elapsed + 0.2 * k, 100 * (4 * (epoch - 1) + k), 2, 0.2, 1.0 / k, 0.5 + 0.05 * k))
        elapsed += 0.8
        result.epochs.append(
            EpochMetrics(epoch, 0.5, 0.7, 0.5, 0.7 + 0.05 * epoch, 0.8, 0.1, 500, epoch == 1, calls=calls)
        )
    points = charts.race_frame([compare.race_points(result)], ["CPU"])
    spec = charts.race_chart(points, target=0.8).to_dict()
    shade, train, test, rule, hover = spec["layer"]
    # Epoch 1, the warm-up, shaded from 0 to where it ended; the x axis' 0 reads "0 / warm-up" (no word in the plot).
    assert shade["mark"]["type"] == "rect"
    (band,) = spec["datasets"][shade["data"]["name"]]
    assert band["start"] == 0.0 and band["end"] == pytest.approx(0.8)
    assert train["encoding"]["x"]["axis"]["labelExpr"] == "datum.value == 0 ? [datum.label, 'warm-up'] : datum.label"
    assert hover["mark"]["type"] == "rule" and hover["encoding"]["tooltip"][1]["title"] == "CPU"
    assert train["encoding"]["x"]["field"] == "seconds" and train["encoding"]["y"]["field"] == "accuracy"
    assert {"filter": "datum.split == 'train'"} in train["transform"]
    assert {"filter": "datum.split == 'test'"} in test["transform"]
    # The target line is named on the y axis beside it, in bold: "target" over "80%"; no text mark in the plot.
    assert rule["mark"]["type"] == "rule" and not [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    axis = train["encoding"]["y"]["axis"]
    assert 0.8 in axis["values"] and "['target', datum.label]" in axis["labelExpr"]
    assert axis["labelFontWeight"]["condition"]["value"] == "bold"
    # Every test point and every training point after epoch 1 inside the axis; the top clear of the highest.
    bottom, top = train["encoding"]["y"]["scale"]["domain"]
    held = points[(points.split == "test") | (points.epoch > 1)]["accuracy"]
    assert bottom <= held.min() and held.max() < top
    assert len(points[points.split == "train"]) == 8 and len(points[points.split == "test"]) == 2
    assert list(points["seconds"]) == sorted(points["seconds"])
    assert train["encoding"]["color"]["legend"]["orient"] == "top"


def test_the_live_charts_as_the_page_draws_them_meet_vega_lites_schema_and_are_sent_unchecked(frame):
    # The page sends each chart without Altair's check against the schema (ui.charts.show): it is checked here.
    import altair as alt
    from altair.utils.schemapi import SchemaValidationError

    from ui import layout

    race = charts.race_frame([], [])
    drawn = [
        layout.fill(charts.accuracy_chart(frame, 10, 0.6)),
        layout.fill(charts.epoch_time_chart(frame, 10)),
        layout.fill(charts.race_chart(race, 0.8, 0.6)),
    ]
    sent = []

    class Column:
        def altair_chart(self, chart, width):
            sent.append(chart.to_dict())  # what Streamlit's conversion asks of the chart

    for chart in drawn:
        checked = chart.to_dict(validate=True)
        charts.show(Column(), chart)
        assert sent[-1] == checked
    # And the check this replaces can fail: a height Vega-Lite does not know is refused there, not by show().
    wrong = alt.Chart(frame).mark_point().encode(x="epoch:Q")
    wrong.height = "nonsense"  # set as an attribute, Altair checks nothing until to_dict
    with pytest.raises(SchemaValidationError):
        wrong.to_dict(validate=True)
    charts.show(Column(), wrong)
    assert sent[-1]["height"] == "nonsense"
