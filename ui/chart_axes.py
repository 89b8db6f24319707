"""Where the live charts' words go: legends above the plot and labels on its axes, never over the data, and y axes
whose domain holds every point. Pure functions of the charts' tables (ui.charts), no streamlit.

At 1280x720 with the sidebar open a live chart is about 375 px wide and its plot 120-160 px tall: a legend or a
label inside it covered the plain-fit curve, the top of a bar or the first point at 3 s (issue 41).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import pandas as pd

from core.language.i18n import _

ROW_CHARACTERS = 30  # a legend's labels up to this many characters in all share one row of a half-width chart
LINE_CHARACTERS = 36  # a label longer than this goes on a line per part (PART) in a half-width chart at 1280x720
PART = " · "  # what a label's parts are joined by (ui.run_text.run_labels)
TICK_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25)  # accuracy ticks, as a share
MOST_TICKS = 5
HEADROOM = 0.06  # of the axis' span, above the highest point: no curve runs along the plot's top edge


def width(label: str) -> int:
    """A label's width in Latin characters (a CJK glyph or full-width sign: two)."""
    return len(label) + sum(ord(c) > 0x2E80 for c in label)


def legend(labels: Sequence[str]) -> alt.Legend:
    """The runs' colours above the plot (below the title), untitled and never cut: one row where the labels are short
    ('CPU', 'GPU:0'), else one entry a row; a long label (History's 'GPU:0 on gpu-server · 2026-11-30 08:00') on a
    line per part, as wide as a half-width chart holds."""
    columns = len(labels) if sum(map(width, labels)) <= ROW_CHARACTERS else 1
    lines = {"labelExpr": f"split(datum.label, '{PART}')"} if any(width(lb) > LINE_CHARACTERS for lb in labels) else {}
    return alt.Legend(
        orient="top",
        direction="horizontal",
        columns=max(columns, 1),
        title=None,
        labelLimit=0,
        labelFontSize=15,
        symbolType="circle",
        symbolSize=90,
        symbolStrokeWidth=0,
        rowPadding=2,
        columnPadding=14,
        offset=4,
        padding=0,
        **lines,
    )


def accuracy_domain(values: pd.Series, floor: float | None = None) -> tuple[float, float]:
    """(low, high) holding every value (from `floor` up, where given), with room above the highest."""
    if not len(values):
        return 0.0, 1.0
    low = float(values.min()) if floor is None else floor
    high = float(values.max())
    span = max(high - low, 0.01)
    return max(0.0, low - (0.0 if floor is not None else span * 0.08)), min(1.0, high + span * HEADROOM)


def ticks(low: float, high: float, target: float | None = None) -> list[float]:
    """Round accuracies between low and high, at most MOST_TICKS, every one a distinct label; the target among them
    and none so near it that their labels would touch."""
    step = next((s for s in TICK_STEPS if (high - low) / s <= MOST_TICKS), TICK_STEPS[-1])
    first = math.ceil(low / step - 1e-9)
    values = [round(k * step, 6) for k in range(first, int(math.floor(high / step + 1e-9)) + 1)]
    if target is None or not low <= target <= high:
        return values
    near = (high - low) / 6  # a two-line label's height, as a share of the axis
    # The target first: where the plot is too short for every label, Vega's greedy overlap keeps the first one.
    return [round(target, 6), *(v for v in values if abs(v - target) >= near)]


def decimals(values: Sequence[float]) -> int:
    """Decimals of a percent that tell these ticks apart (0 for 80%, 85%; 1 for 80.5%)."""
    for d in (0, 1, 2):
        if len({f"{v:.{d}%}" for v in values}) == len(values):
            return d
    return 3


def accuracy_y(domain: tuple[float, float], target: float | None = None) -> alt.Y:
    """Accuracy in percent over `domain`, its ticks from ticks(); the target's tick reads 'target' over its percent,
    in bold, on the axis beside its dotted line: no label inside the plot."""
    values = ticks(*domain, target)
    places = decimals(values)
    axis = alt.Axis(values=values, format=f".{places}%", labelFlush=False, labelOverlap="greedy")
    if target is not None and round(target, 6) in values:
        test = f"abs(datum.value - {target!r}) < 1e-6"
        word = _("target").replace("'", "’")
        bold = {"condition": {"test": test, "value": "bold"}, "value": "normal"}
        label = f"{test} ? ['{word}', datum.label] : datum.label"
        axis = alt.Axis(
            values=values,
            format=f".{places}%",
            labelFlush=False,
            labelOverlap="greedy",
            labelExpr=label,
            labelFontWeight=bold,
        )
    scale = alt.Scale(domain=list(domain), nice=False, zero=False)
    return alt.Y("accuracy:Q", title=_("Accuracy"), scale=scale, axis=axis)
