"""Why a device wins or loses: the roofline (log-log) and where a steady-state epoch goes, for Train and Scaling.

The figures come from core.analysis.roofline and core.analysis.why (no TensorFlow): each device's compute roof and
bandwidth slope, each run as its own point in its own colour (or a sweep's points), and a stacked bar per run of its
steady epoch's measured parts (fixed cost per step, the layers' products at their shapes, memory traffic at the measured
bandwidth, other per-sample work, the epoch's set-up) and what they leave unexplained, with the sentence that names a
bound only where it is half of the epoch, and the advice from the same figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, fields

import altair as alt
import pandas as pd
import streamlit as st

from core.analysis import roofline, why
from core.language.i18n import N_, _
from core.results import RunResult, SweepPoint
from ui import charts, run_text, step_trace


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
    rows = [{"run": run, **asdict(p)} for p, run in zip(points, runs, strict=True)]
    return pd.DataFrame(rows, columns=["run", *(f.name for f in fields(roofline.Point))])


def roofline_chart(
    roofs: Sequence[roofline.Roof], points: Sequence[roofline.Point], runs: Sequence[str], colours: Sequence[str] = ()
):
    """Log-log: x = FLOP per byte, y = achieved GFLOP/s; each device's roofs (lines) and each run (a dot of its own).

    colours: each run's colour, as the race and the epoch chart draw it (so a dot is its run's); by default the
    palette in the runs' order. The roofs are grey, dashed per device, named in the tooltip.
    """
    dots = points_frame(points, runs)
    ridges = [r.ridge for r in roofs if r.ridge]
    xs = list(dots["intensity"]) + ridges or [1.0]
    low, high = min(xs) / 4, max(xs) * 4
    lines = roof_frame(roofs, low, high)
    order = list(dict.fromkeys(dots["run"]))
    palette = list(colours) or [charts.PALETTE[i % len(charts.PALETTE)] for i in range(len(order))]
    colour = alt.Color(
        "run:N",
        title=_("Run"),
        sort=order,
        scale=alt.Scale(domain=order, range=palette[: len(order)] or [charts.INK]),
        legend=alt.Legend(orient="bottom", columns=1, title=None, labelLimit=0),
    )
    x = alt.X("intensity:Q", title=_("FLOP per byte"), scale=alt.Scale(type="log", domain=[low, high], nice=False))
    y = alt.Y("gflops:Q", title=_("GFLOP/s"), scale=alt.Scale(type="log"))
    devices = list(dict.fromkeys(lines["device"]))
    dash = alt.StrokeDash(
        "device:N",
        scale=alt.Scale(domain=devices or ["-"], range=[[1, 0], [8, 4], [2, 3]][: max(1, len(devices))]),
        legend=None,
    )
    roof = (
        alt.Chart(lines)
        .mark_line(strokeWidth=3, color="#888888")
        .encode(x=x, y=y, strokeDash=dash, detail="device:N", tooltip=[alt.Tooltip("device:N", title=_("Roof of"))])
    )
    dot = (
        alt.Chart(dots)
        .mark_point(size=160, filled=True, stroke=charts.INK, strokeWidth=1)
        .encode(
            x=x,
            y=y,
            color=colour,
            tooltip=[
                alt.Tooltip("run:N", title=_("Run")),
                alt.Tooltip("model:N", title=_("Model")),
                alt.Tooltip("batch_size:Q", title=_("Batch")),
                alt.Tooltip("device:N", title=_("Device")),
                alt.Tooltip("samples_per_second:Q", title=_("Samples/s"), format=",.0f"),
                alt.Tooltip("intensity:Q", title=_("FLOP per byte"), format=".2f"),
                alt.Tooltip("gflops:Q", title=_("GFLOP/s"), format=",.2f"),
            ],
        )
    )
    # The dots' layer first: its data is the runs', as a reader of the chart's first layer expects.
    return charts._style(alt.layer(dot, roof), _("Roofline"), _("grey lines = each device's roofs, dots = the runs"))


def runs_ui(results: Sequence[RunResult], labels: Sequence[str]) -> None:
    """Under Train's charts: each run on its device's roofline, where its traced step goes, the bound, the line and
    its test, the floors and the advice."""
    colours = {lb: charts.PALETTE[i % len(charts.PALETTE)] for i, lb in enumerate(labels)}
    roofs = {}
    for r in results:
        if r.epochs and roofline.run_point(r, _device(r)):
            roofs.setdefault(_device(r), roofline.run_roof(r, _device(r)))
    plotted = [(p, lb) for r, lb in zip(results, labels, strict=True) if (p := roofline.run_point(r, _device(r)))]
    explained = [(w, r, lb) for r, lb in zip(results, labels, strict=True) if (w := why.explain(r))]
    traced = [(w, lb) for w, _r, lb in explained if w.trace]
    if not plotted and not explained:
        return
    left, right = st.columns(2)
    if plotted:
        points, names = _unzip(plotted)
        charts.show(left, roofline_chart(list(roofs.values()), points, names, [colours[n] for n in names]))
    if traced:
        charts.show(right, step_trace.trace_chart([w for w, _lb in traced], [lb for _w, lb in traced]))
    for r, label in zip(results, labels, strict=True):
        if r.steady_epochs() and not why.explain(r):
            said = _(
                "{label}: where its step goes needs the measurements a run makes after its first epoch; this run "
                "has none (an older file)."
            )
            st.caption(run_text.plain(said.format(label=label)))
    step_trace.sentences_ui(explained, _unmeasured, limits_note)


def sweep_ui(points: Sequence[SweepPoint], model: dict, devices: dict) -> None:
    """Under Scaling's chart: each sweep point on its device's roofline."""
    plotted = roofline.sweep_points(points, model)
    if not plotted:
        return
    roofs = [roofline.roof(d.upper(), devices.get(d, {})) for d in dict.fromkeys(p.device for p in points)]
    names = [_("{device} at batch {batch}").format(device=p.device, batch=p.batch_size) for p in plotted]
    charts.show(st, roofline_chart(roofs, plotted, names))
    st.caption(
        _(
            "Each point is one device at one batch size, at its measured samples/s; the roofs are each device's "
            "measured matrix-multiply peak and memory bandwidth."
        )
    )


def limits_text(result: RunResult) -> str:
    """'peak 176 GFLOP/s (this server's) · bandwidth 16.6 GB/s' from a run's measured limits."""
    found = roofline.limits(result)
    peak, bandwidth = (roofline.positive(found.get(k)) for k in ("peak_gflops", "bandwidth_gbs"))
    source = {"server": _(" (this server's)"), "process": _(" (its process's)")}.get(found.get("peak_source") or "", "")
    return " · ".join(
        [
            _("peak {peak:,.0f} GFLOP/s{source}").format(peak=peak, source=source) if peak else _("peak not measured"),
            _("bandwidth {bw:,.1f} GB/s").format(bw=bandwidth) if bandwidth else _("bandwidth not measured"),
        ]
    )


def _device(result: RunResult) -> str:
    return str(result.device.get("label") or str(result.config.get("device", "?")).upper())


def _unmeasured(result: RunResult) -> str:
    found, shapes = roofline.limits(result), result.measured.shapes if result.measured else None
    names = {
        _("Peak"): found.get("peak_gflops"),
        _("bandwidth"): found.get("bandwidth_gbs"),
        _("the products' rate"): getattr(shapes, "sample_seconds", None),
    }
    return _(" and ").join(name for name, value in names.items() if roofline.positive(value) is None)


# A run's own quick try of the peak is said where it departs from the shared figure by more than that figure's own
# spread (its tries' range), and never for less than FLOOR of it (a figure of one try has no spread).
FLOOR = 0.10
PEAK_SOURCES = {"server": N_("server"), "process": N_("process")}  # who measured the peak a run used (peak_source)


def departs(shared: float, own: float, tries) -> bool:
    """Whether the run's own try lies further from the shared peak than the shared peak's tries spread."""
    spread = max(tries) - min(tries) if len(tries) >= 2 else 0.0
    return abs(own - shared) > max(spread, FLOOR * shared)


def limits_note(result: RunResult) -> str | None:
    """Where the run's own peak measurement departs from the figure it used by more than that figure's spread, one
    sentence that says which way and what it means."""
    found = roofline.limits(result)
    shared, own = roofline.positive(found.get("peak_gflops")), roofline.positive(found.get("own_peak_gflops"))
    tries = [t for t in found.get("peak_tries") or () if roofline.positive(t)]
    if not shared or not own or not departs(shared, own, tries):
        return None
    if own < shared:
        said = _(
            "its own measurement of the peak just before it, {own:,.0f} GFLOP/s, is {off:.0%} below the "
            "{shared:,.0f} GFLOP/s ({spread}) this {source} measured and every run here uses: the machine was busier "
            "then, so this run's share of peak reads low."
        )
    else:
        said = _(
            "its own measurement of the peak just before it, {own:,.0f} GFLOP/s, is {off:.0%} above the "
            "{shared:,.0f} GFLOP/s ({spread}) this {source} measured and every run here uses: the machine was quieter "
            "then, so this run's share of peak reads high."
        )
    source = _(PEAK_SOURCES.get(found.get("peak_source") or "", PEAK_SOURCES["process"]))  # in the page's language
    spread = (
        _("its {n} tries: {low:,.0f}-{high:,.0f}").format(n=len(tries), low=min(tries), high=max(tries))
        if len(tries) >= 2
        else _("one try")
    )
    return said.format(own=own, off=abs(own / shared - 1), shared=shared, spread=spread, source=source)


def _unzip(pairs) -> tuple[list, list]:
    return [p for p, _lb in pairs], [lb for _p, lb in pairs]
