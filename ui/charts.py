"""Pure functions from per-epoch tables (RunResult.to_frame()) to Altair charts sized for a projector."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from core.language.i18n import N_, _
from ui import chart_aids, chart_axes

# Okabe-Ito colours: distinct for colour-blind viewers and still distinct on a washed-out projector.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
FONT = {"label": 16, "title": 18, "chart_title": 22, "subtitle": 16}
# The plot area; title, axes and legends add about 150 px. Small enough that on a 1280x720 projector
# the page's header, the Run row, the status line and both charts fit on one screen.
HEIGHT = 135
INK = "#1A1A1A"  # dark labels: a projector washes out grey
WARMUP_NOTE = N_("epoch 1 includes compilation")
RACE_MARGIN = 0.05  # the race's axis starts this far below its lowest test point: room for the rise, not the start


def show(where: Any, chart: alt.TopLevelMixin) -> None:
    """Draw `chart` in `where` (st, or a column), its spec not checked against Vega-Lite's schema at each draw: that
    check took a third of a drawing's CPU (a Quick demo's race chart: 109 of 304 ms), which a room's server and a
    laptop's training share. The tests check each chart's spec against the schema instead (tests/test_charts.py,
    test_roofline.py, test_roofline_app.py, test_scaling_app.py)."""
    object.__setattr__(chart, "to_dict", functools.partial(type(chart).to_dict, chart, validate=False))
    where.altair_chart(chart, width="stretch")


def epochs_frame(frames: Sequence[pd.DataFrame], labels: Sequence[str]) -> pd.DataFrame:
    """Several runs' to_frame() tables as one, with a 'series' column naming each run."""
    parts = [f.assign(series=label) for f, label in zip(frames, labels, strict=True) if len(f)]
    if not parts:
        return pd.DataFrame(columns=["series", "epoch", "train_accuracy", "test_accuracy", "train_seconds", "warmup"])
    return pd.concat(parts, ignore_index=True)


def _colour(frame: pd.DataFrame, title: str = N_("Run"), above: bool = False) -> alt.Color:
    order = list(dict.fromkeys(frame["series"]))
    scale = alt.Scale(domain=order, range=[PALETTE[i % len(PALETTE)] for i in range(len(order))])
    # Above the plot (the live charts: chart_axes.legend), else under it; one entry a row, untitled: none cut short.
    legend = chart_axes.legend(order) if above else alt.Legend(orient="bottom", columns=1, title=None, labelLimit=0)
    return alt.Color("series:N", title=_(title), scale=scale, sort=order, legend=legend)


_TEXT = {"labelFontSize": FONT["label"], "labelColor": INK, "titleColor": INK}  # axes and legends alike


def _style(chart, title: str, subtitle: str):
    return (
        chart.properties(
            height=HEIGHT,
            # Fit the width to the column, keep the plot's own height (titles and legends come on top).
            autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
            title=alt.TitleParams(
                title,
                subtitle=subtitle,
                fontSize=FONT["chart_title"],
                subtitleFontSize=FONT["subtitle"],
                anchor="start",
                color=INK,
                subtitleColor=INK,
            ),
        )
        .configure_axis(**_TEXT, titleFontSize=FONT["title"], titleFontWeight="normal", grid=True)
        .configure_legend(**_TEXT, titleFontSize=FONT["label"], symbolSize=220, rowPadding=2)
    )


def _epoch_domain(frame: pd.DataFrame, epochs_total: int | None) -> list[int]:
    last = int(frame["epoch"].max()) if len(frame) else 1
    return list(range(1, max(last, epochs_total or 0, 1) + 1))


def accuracy_chart(frame: pd.DataFrame, epochs_total: int | None = None, smoothing: float = 0.0) -> alt.LayerChart:
    """Train and test accuracy per epoch: colour = series, solid = test, dashed = train (smoothed by `smoothing`).

    epochs_total fixes the x axis to the whole run, so a live chart grows into it. Hovering reads every run there.
    """
    long = frame.melt(
        id_vars=["series", "epoch"],
        value_vars=["test_accuracy", "train_accuracy"],
        var_name="data",
        value_name="accuracy",
    )
    test, train = _("Test"), _("Train")  # the tooltip's words for the two lines
    long["data"] = long["data"].map({"test_accuracy": test, "train_accuracy": train})
    long = chart_aids.smoothed(long, "accuracy", smoothing, long["data"] == train)
    domain = _epoch_domain(frame, epochs_total)
    x_scale = alt.Scale(domain=[1, max(domain[-1], 2)], nice=False)
    x = alt.X("epoch:Q", title=_("Epoch"), scale=x_scale, axis=alt.Axis(tickMinStep=1, format="d"))
    chart = (
        alt.Chart(long)
        .mark_line(point=alt.OverlayMarkDef(size=90, filled=True), strokeWidth=3.5)
        .encode(
            x=x,
            y=chart_axes.accuracy_y(chart_axes.accuracy_domain(long["accuracy"])),
            color=_colour(frame, above=True),
            strokeDash=alt.StrokeDash(
                "data:N",
                title=_("Data"),
                sort=[test, train],
                scale=alt.Scale(domain=[test, train], range=[[1, 0], [7, 5]]),
                legend=None,  # the subtitle says which is which, in words
            ),
            detail="series:N",
            tooltip=[
                alt.Tooltip("series:N", title=_("Run")),
                alt.Tooltip("epoch:Q", title=_("Epoch")),
                alt.Tooltip("data:N", title=_("Data")),
                alt.Tooltip("accuracy:Q", title=_("Accuracy"), format=".2%"),
            ],
        )
    )
    parts = {_("training"): long["data"] == train, _("test"): long["data"] == test}
    rows = chart_aids.readout(long, "epoch", parts, grid=pd.Series(domain, dtype=float).to_numpy())
    hover = chart_aids.readout_layer(rows, x, list(dict.fromkeys(long["series"])), "Epoch", "d")
    return _style(alt.layer(chart, hover), _("Accuracy per epoch"), _("solid = test set, dashed = training set"))


def race_frame(points: Sequence[Sequence[dict]], labels: Sequence[str]) -> pd.DataFrame:
    """Several runs' core.analysis.compare.race_points as one table with a 'series' column."""
    rows = [{**p, "series": label} for run, label in zip(points, labels, strict=True) for p in run]
    return pd.DataFrame(rows, columns=["series", "epoch", "seconds", "samples", "accuracy", "loss", "split"])


def race_floor(data: pd.DataFrame) -> float:
    """Where the race's y axis starts: under every test point and every training point after epoch 1.

    Epoch 1's first calls start near chance; an axis down to them would flatten the finish, where the runs differ,
    so they rise into the plot from below, inside the shaded warm-up (its axis' tick 0 says warm-up).
    """
    test = data.loc[data["split"] == "test", "accuracy"]
    steady = data.loc[(data["split"] == "train") & (data["epoch"] > 1), "accuracy"]
    if not len(test):
        return max(0.0, float(data["accuracy"].min())) if len(data) else 0.0
    low = min(float(test.min()) - RACE_MARGIN, float(steady.min()) - 0.01 if len(steady) else 1.0)
    return max(0.0, low)


def race_chart(points: pd.DataFrame, target: float | None = None, smoothing: float = 0.0) -> alt.LayerChart:
    """The race against the clock: accuracy against training seconds; dashed = training (each call), solid = test.

    Training accuracy comes at each call of the step loop, so the faster run's line visibly runs ahead; test
    accuracy at each epoch's end. target: a dotted rule at that accuracy, named on the y axis. smoothing: the
    training line's, as TensorBoard's. Epoch 1 (compiling) is shaded; hovering reads every run at that moment.
    """
    data = points.assign(data=points["split"].map({"test": _("Test"), "train": _("Train")}))
    data = chart_aids.smoothed(data, "accuracy", smoothing, data["split"] == "train")
    floor = race_floor(data)
    domain = chart_axes.accuracy_domain(data.loc[data["accuracy"] >= floor, "accuracy"], floor)
    if target is not None and not domain[0] <= target <= domain[1]:
        target = None  # a target off the axis has no line to name: the table still says its times
    # The shade starts at 0, whose tick reads "0 / warm-up" on two lines, as the epochs' chart marks its epoch 1.
    warm = f"datum.value == 0 ? [datum.label, '{_('warm-up')}'] : datum.label" if (data["epoch"] == 1).any() else None
    axis = alt.Axis(labelExpr=warm) if warm else alt.Axis()
    x = alt.X("seconds:Q", title=_("Training seconds"), scale=alt.Scale(domainMin=0), axis=axis)
    base = alt.Chart(data).encode(
        x=x,
        y=chart_axes.accuracy_y(domain, target),
        color=_colour(data, above=True),
        tooltip=[
            alt.Tooltip("series:N", title=_("Run")),
            alt.Tooltip("data:N", title=_("Data")),
            alt.Tooltip("epoch:Q", title=_("Epoch")),
            alt.Tooltip("seconds:Q", title=_("Seconds"), format=".2f"),
            alt.Tooltip("accuracy:Q", title=_("Accuracy"), format=".2%"),
        ],
    )
    train = base.transform_filter("datum.split == 'train'").mark_line(strokeWidth=2.5, strokeDash=[7, 5], clip=True)
    test = base.transform_filter("datum.split == 'test'").mark_line(
        point=alt.OverlayMarkDef(size=90, filled=True, clip=True), strokeWidth=3.5, clip=True
    )
    layers = [*chart_aids.warmup_layers(data, x), train, test]
    if target is not None:  # named on the y axis, beside the line (chart_axes.accuracy_y)
        mark = pd.DataFrame({"accuracy": [target]})
        layers.append(alt.Chart(mark).mark_rule(color=INK, strokeDash=[2, 3], strokeWidth=2).encode(y="accuracy:Q"))
    if len(data):
        rows = chart_aids.readout(
            data, "seconds", {_("training"): data["split"] == "train", _("test"): data["split"] == "test"}
        )
        layers.append(chart_aids.readout_layer(rows, x, list(dict.fromkeys(data["series"])), "Training seconds", ".1f"))
    return _style(alt.layer(*layers), _("Accuracy against the clock"), _("solid = test set, dashed = training set"))


def epoch_time_chart(frame: pd.DataFrame, epochs_total: int | None = None) -> alt.LayerChart:
    """Training seconds per epoch, one bar per series; the warm-up epoch is faded and labelled on its tick (its
    tooltip says it includes compilation); the legend above the plot, as the race's."""
    data = frame[["series", "epoch", "train_seconds", "warmup"]].rename(columns={"train_seconds": "seconds"})
    warm = _("warm-up ({note})").format(note=_(WARMUP_NOTE))
    data = data.assign(phase=data["warmup"].map({True: warm, False: _("steady state")}))
    top = float(data["seconds"].max()) if len(data) else 1.0
    # The tallest bar inside the plot, its top clear of the frame.
    scale = alt.Scale(domain=[0, top * (1 + chart_axes.HEADROOM)], nice=False)
    y = alt.Y("seconds:Q", title=_("Seconds (training only)"), scale=scale)
    x_scale = alt.Scale(domain=_epoch_domain(frame, epochs_total))
    # Epoch 1's tick reads "1 / warm-up" on two lines, so it stays marked however narrow the bars get.
    tick = _("warm-up")
    axis = alt.Axis(labelAngle=0, labelExpr=f"datum.value == 1 ? ['1', '{tick}'] : datum.label")
    x = alt.X("epoch:O", title=_("Epoch"), scale=x_scale, axis=axis)
    bars = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=x,
            xOffset=alt.XOffset("series:N", sort=list(dict.fromkeys(data["series"]))),
            y=y,
            color=_colour(frame, above=True),
            opacity=alt.condition("datum.warmup", alt.value(0.45), alt.value(1.0)),
            tooltip=[
                alt.Tooltip("series:N", title=_("Run")),
                alt.Tooltip("epoch:O", title=_("Epoch")),
                alt.Tooltip("seconds:Q", title=_("Seconds"), format=".3f"),
                alt.Tooltip("phase:N", title=_("Epoch phase")),
            ],
        )
    )
    return _style(alt.layer(bars), _("Seconds per epoch"), _("lower is faster · faded bars: warm-up"))


def throughput_chart(points: pd.DataFrame) -> alt.LayerChart:
    """Samples/s against batch size (core.results.points_frame), both axes log, one line per device.

    The line joins the medians; a bar at each point spans the fastest and slowest repeat.
    Failed points (no throughput, e.g. out of memory) are left out.
    """
    data = points.dropna(subset=["samples_per_second"]).rename(columns={"label": "series"})
    data = data[["series", "batch_size", "samples_per_second", "samples_per_second_min", "samples_per_second_max"]]
    batches = sorted({int(b) for b in data["batch_size"]}) or [1]
    # A little room either side, so the end points and their bars are not cut in half.
    x = alt.X(
        "batch_size:Q",
        title=_("Batch size (log scale)"),
        scale=alt.Scale(type="log", base=2, domain=[batches[0] / 1.3, batches[-1] * 1.3], nice=False),
        axis=alt.Axis(values=batches, format="d", labelFlush=False),
    )
    y_scale = alt.Scale(type="log", nice=False)
    y = alt.Y(
        "samples_per_second:Q", title=_("Samples per second (log scale)"), scale=y_scale, axis=alt.Axis(format="~s")
    )
    colour = _colour(data, "Device")
    lines = (
        alt.Chart(data)
        .mark_line(point=alt.OverlayMarkDef(size=110, filled=True), strokeWidth=3.5)
        .encode(
            x=x,
            y=y,
            color=colour,
            tooltip=[
                alt.Tooltip("series:N", title=_("Device")),
                alt.Tooltip("batch_size:Q", title=_("Batch size")),
                alt.Tooltip("samples_per_second:Q", title=_("Samples/s (median)"), format=",.0f"),
                alt.Tooltip("samples_per_second_min:Q", title=_("slowest repeat"), format=",.0f"),
                alt.Tooltip("samples_per_second_max:Q", title=_("fastest repeat"), format=",.0f"),
            ],
        )
    )
    spread = (
        alt.Chart(data)
        .mark_errorbar(ticks=alt.MarkConfig(size=14, strokeWidth=2.5), thickness=2.5)
        .encode(
            x=x,
            y=alt.Y("samples_per_second_min:Q", title=_("Samples per second (log scale)"), scale=y_scale),
            y2=alt.Y2("samples_per_second_max:Q"),
            color=colour,
        )
    )
    return _style(
        alt.layer(lines, spread),
        _("Training throughput by batch size"),
        _("higher is faster · bars: slowest to fastest repeat"),
    )
