"""Why a device wins or loses: the roofline (log-log) and where a steady-state epoch goes, for Train and Scaling.

The figures come from core.roofline (no TensorFlow): each device's compute roof and bandwidth slope,
the runs (or a sweep's points) as dots, and a stacked bar per run of compute at peak, memory traffic
at the measured bandwidth, step overhead and the rest, with the sentence that names the bound.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from core import roofline
from core.results import RunResult, SweepPoint
from ui import charts, views

CAVEAT = (
    "These are models, not profiles: each part is what the work would take at the device's measured peak, "
    "bandwidth or step floor alone; they may overlap, and the rest is what they leave unexplained."
)
PARTS = {
    "compute": "compute at peak",
    "memory": "memory at bandwidth",
    "overhead": "floor × steps",
    "rest": "the rest",
}
PART_COLOURS = ("#0072B2", "#009E73", "#D55E00", "#BBBBBB")


def roof_frame(roofs: Sequence[roofline.Roof], low: float, high: float) -> pd.DataFrame:
    """Each roof as a polyline over [low, high] FLOP per byte: up the bandwidth slope, then along the peak."""
    rows = []
    for r in roofs:
        xs = [low, high] + ([r.ridge] if r.ridge and low < r.ridge < high else [])
        for x in sorted(xs):
            if (y := r.attainable(x)) is not None:
                rows.append({"device": r.device, "intensity": x, "gflops": y})
    return pd.DataFrame(rows, columns=["device", "intensity", "gflops"])


def points_frame(points: Sequence[roofline.Point], runs: Sequence[str]) -> pd.DataFrame:
    """The dots: one per run or sweep point, with what the tooltip shows."""
    rows = [
        {
            "run": run,
            "device": p.device,
            "model": p.model,
            "batch_size": p.batch_size,
            "intensity": p.intensity,
            "gflops": p.gflops,
            "samples_per_second": p.samples_per_second,
        }  # fmt: skip
        for p, run in zip(points, runs, strict=True)
    ]
    return pd.DataFrame(rows, columns=["run", "device", "model", "batch_size", "intensity", "gflops",
                                       "samples_per_second"])  # fmt: skip


def roofline_chart(roofs: Sequence[roofline.Roof], points: Sequence[roofline.Point], runs: Sequence[str]):
    """Log-log: x = FLOP per byte, y = achieved GFLOP/s; per device its roofs (lines) and its runs (dots)."""
    dots = points_frame(points, runs)
    ridges = [r.ridge for r in roofs if r.ridge]
    xs = list(dots["intensity"]) + ridges or [1.0]
    low, high = min(xs) / 4, max(xs) * 4
    lines = roof_frame(roofs, low, high)
    order = list(dict.fromkeys([*lines["device"], *dots["device"]]))
    colour = alt.Color(
        "device:N",
        title="Device",
        sort=order,
        scale=alt.Scale(domain=order, range=[charts.PALETTE[i % len(charts.PALETTE)] for i in range(len(order))]),
        legend=alt.Legend(orient="bottom", title=None, labelLimit=0),
    )
    x = alt.X("intensity:Q", title="FLOP per byte", scale=alt.Scale(type="log", domain=[low, high], nice=False))
    y = alt.Y("gflops:Q", title="GFLOP/s", scale=alt.Scale(type="log"))
    roof = alt.Chart(lines).mark_line(strokeWidth=3).encode(x=x, y=y, color=colour, detail="device:N")
    dot = (
        alt.Chart(dots)
        .mark_point(size=160, filled=True, stroke=charts.INK, strokeWidth=1)
        .encode(
            x=x,
            y=y,
            color=colour,
            tooltip=[
                alt.Tooltip("run:N", title="Run"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("batch_size:Q", title="Batch"),
                alt.Tooltip("device:N", title="Device"),
                alt.Tooltip("samples_per_second:Q", title="Samples/s", format=",.0f"),
                alt.Tooltip("intensity:Q", title="FLOP per byte", format=".2f"),
                alt.Tooltip("gflops:Q", title="GFLOP/s", format=",.2f"),
            ],
        )
    )
    # The dots' layer first: its data is the runs', as a reader of the chart's first layer expects.
    return charts._style(alt.layer(dot, roof), "Roofline", "lines = the device's roofs, dots = the runs")


def breakdown_frame(breakdowns: Sequence[roofline.Breakdown], runs: Sequence[str]) -> pd.DataFrame:
    """One row per run and part (seconds); a part not measured is left out, the rest only where positive."""
    rows = [
        {"run": run, "part": PARTS[name], "order": i, "seconds": value, "epoch_seconds": b.epoch_seconds}
        for b, run in zip(breakdowns, runs, strict=True)
        for i, (name, value) in enumerate(b.parts().items())
        if value is not None and value > 0
    ]
    return pd.DataFrame(rows, columns=["run", "part", "order", "seconds", "epoch_seconds"])


def breakdown_chart(breakdowns: Sequence[roofline.Breakdown], runs: Sequence[str]):
    """A stacked bar per run of where its steady-state epoch goes, by the model."""
    frame = breakdown_frame(breakdowns, runs)
    colour = alt.Color(
        "part:N",
        title=None,
        sort=list(PARTS.values()),
        scale=alt.Scale(domain=list(PARTS.values()), range=list(PART_COLOURS)),
        legend=alt.Legend(
            orient="bottom", columns=1, labelLimit=0
        ),  # one a row, short labels: a half-width chart cut long ones, and the run labels on two lines
    )
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("sum(seconds):Q", title="Seconds of an epoch", stack="zero"),
            # A run's label on two lines, device then what differs: "CPU" / "(multi-step loop, XLA)", never cut.
            y=alt.Y(
                "run:N",
                title=None,
                sort=list(runs),
                axis=alt.Axis(labelLimit=0, labelExpr="split(replace(datum.label, ' (', '\\n('), '\\n')"),
            ),
            color=colour,
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("run:N", title="Run"),
                alt.Tooltip("part:N", title="Part"),
                alt.Tooltip("seconds:Q", title="Seconds", format=".4f"),
                alt.Tooltip("epoch_seconds:Q", title="Epoch (s)", format=".3f"),
            ],
        )
    )
    return charts._style(bars, "Where an epoch goes", "median steady-state epoch, by the roofline model")


def runs_ui(results: Sequence[RunResult], labels: Sequence[str]) -> None:
    """Under Train's charts: the runs on their devices' rooflines, where each epoch goes, and the bound in words."""
    pairs = [(r, lb) for r, lb in zip(results, labels, strict=True) if roofline.run_breakdown(r)]
    if not pairs:
        return
    roofs = {}
    for r, _ in pairs:
        device = _device(r)
        roofs.setdefault(device, roofline.roof(device, r.device))
    plotted = [(p, lb) for r, lb in pairs if (p := roofline.run_point(r, _device(r)))]
    breakdowns = [roofline.run_breakdown(r) for r, _ in pairs]
    left, right = st.columns(2)
    left.altair_chart(roofline_chart(list(roofs.values()), *_unzip(plotted)), width="stretch")
    right.altair_chart(breakdown_chart(breakdowns, [lb for _, lb in pairs]), width="stretch")
    for b, (r, label) in zip(breakdowns, pairs, strict=True):
        st.markdown(f"- **{views.plain(label)}**: {views.plain(roofline.bound_sentence(b))}")
        if unmeasured := _unmeasured(r.device):
            st.caption(views.plain(f"{label}: {unmeasured} not measured."))
    st.caption(CAVEAT)


def sweep_ui(points: Sequence[SweepPoint], model: dict, devices: dict) -> None:
    """Under Scaling's chart: each sweep point on its device's roofline."""
    plotted = roofline.sweep_points(points, model)
    if not plotted:
        return
    roofs = [roofline.roof(d.upper(), devices.get(d, {})) for d in dict.fromkeys(p.device for p in points)]
    chart = roofline_chart(roofs, plotted, [f"{p.device} at batch {p.batch_size}" for p in plotted])
    st.altair_chart(chart, width="stretch")
    st.caption(CAVEAT)


def limits_text(info: dict) -> str:
    """'peak 176 GFLOP/s · bandwidth 16.6 GB/s · step floor 81 µs' from a result's device info."""
    peak, bandwidth, floor = (
        roofline.measured(info.get(k)) for k in ("peak_gflops", "bandwidth_gbs", "step_floor_seconds")
    )
    return " · ".join(
        [
            f"peak {peak:,.0f} GFLOP/s" if peak else "peak not measured",
            f"bandwidth {bandwidth:,.1f} GB/s" if bandwidth else "bandwidth not measured",
            f"step floor {floor * 1e6:,.0f} µs" if floor else "step floor not measured",
        ]
    )


def _device(result: RunResult) -> str:
    return str(result.device.get("label") or str(result.config.get("device", "?")).upper())


def _unmeasured(info: dict) -> str:
    names = {"peak_gflops": "peak", "bandwidth_gbs": "bandwidth", "step_floor_seconds": "step floor"}
    return " and ".join(words for key, words in names.items() if roofline.measured(info.get(key)) is None).capitalize()


def _unzip(pairs) -> tuple[list, list]:
    return [p for p, _ in pairs], [lb for _, lb in pairs]
