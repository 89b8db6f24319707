"""What TensorBoard users expect of the live charts: smoothed training curves, a hover readout of every run at
one x, and the race's warm-up marked. Pure functions of the charts' tables (ui.charts), no streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

SMOOTHING = 0.6  # TensorBoard's default weight
READOUT_POSITIONS = 120  # x positions the readout can stop at, at most: enough for the eye, a small table
INK = "#1A1A1A"
WARMUP_BAND = "#D9D9D9"


def smooth(values: Sequence[float], weight: float) -> np.ndarray:
    """TensorBoard's smoothing: an exponential moving average, debiased so the first points are not pulled to 0."""
    # ewm's adjusted mean divides by the weights so far: TensorBoard's debiasing (weight below 1, as the slider goes).
    return pd.Series(values, dtype=float).ewm(alpha=1 - weight).mean().to_numpy()


def smoothed(frame: pd.DataFrame, column: str, weight: float, rows: pd.Series | None = None) -> pd.DataFrame:
    """`frame` with `column` smoothed per series over the rows `rows` selects (all by default), in their order."""
    if weight <= 0 or len(frame) == 0:
        return frame
    out = frame.copy()
    picked = out.index if rows is None else out.index[rows.to_numpy()]
    for _series, index in out.loc[picked].groupby("series", sort=False).groups.items():
        out.loc[index, column] = smooth(out.loc[index, column].to_numpy(dtype=float), weight)
    return out


def _at(frame: pd.DataFrame, x: str, value: str, grid: np.ndarray) -> list[float | None]:
    """The last `value` at or before each grid x (None before the first)."""
    frame = frame.sort_values(x)
    where = np.searchsorted(frame[x].to_numpy(dtype=float), grid, side="right") - 1
    values = frame[value].to_numpy(dtype=float)
    return [float(values[i]) if i >= 0 else None for i in where]


def readout(frame: pd.DataFrame, x: str, parts: dict[str, pd.Series], grid: np.ndarray | None = None) -> pd.DataFrame:
    """One row per x position: x and, per run (columns run_0, run_1, ... in legend order), what it reads there.

    parts: name -> a boolean mask of frame's rows whose 'accuracy' that name reads ('training': the train
    points); each run's line says the last value of each part at or before x: "84.1% training · 83.5% test".
    """
    series = list(dict.fromkeys(frame["series"]))
    xs = np.sort(frame[x].unique().astype(float))
    if grid is None:
        count = max(2, min(READOUT_POSITIONS, len(frame) // 2))
        grid = xs if len(xs) <= count else np.linspace(xs[0], xs[-1], count)
    rows = pd.DataFrame({x: grid})
    for i, name in enumerate(series):
        mine = frame["series"] == name
        read = {p: _at(frame[mine & mask], x, "accuracy", grid) for p, mask in parts.items() if (mine & mask).any()}
        rows[f"run_{i}"] = [
            " · ".join(f"{values[k]:.1%} {p}" for p, values in read.items() if values[k] is not None) or "—"
            for k in range(len(grid))
        ]
    return rows


def readout_layer(rows: pd.DataFrame, x: alt.X, labels: Sequence[str], x_title: str, x_format: str) -> alt.Chart:
    """A vertical rule under the pointer, at the nearest x position, whose tooltip reads every run there."""
    pick = alt.selection_point(
        name="readout",
        fields=[x.shorthand.split(":")[0]],
        nearest=True,
        on="pointerover",
        clear="pointerout",
        empty=False,
    )
    field = x.shorthand.split(":")[0]
    tooltip = [alt.Tooltip(f"{field}:Q", title=x_title, format=x_format)]
    tooltip += [alt.Tooltip(f"run_{i}:N", title=label) for i, label in enumerate(labels)]
    return (
        alt.Chart(rows)
        .mark_rule(color=INK, strokeWidth=1.5)
        .encode(x=x, opacity=alt.condition(pick, alt.value(0.55), alt.value(0.0)), tooltip=tooltip)
        .add_params(pick)
    )


def warmup_layers(points: pd.DataFrame, x: alt.X) -> list[alt.Chart]:
    """The race's epoch 1, shaded from 0 to where the slowest run's epoch 1 has got (the x axis names it under its 0:
    a word inside the plot covered the curves rising through it)."""
    first = points.loc[points["epoch"] == 1, "seconds"]
    if len(first) == 0:
        return []
    band = pd.DataFrame({"start": [0.0], "end": [float(first.max())]})
    at = alt.X("start:Q", title=x.to_dict().get("title"))  # the race's own x scale and title (layers share them)
    return [alt.Chart(band).mark_rect(color=WARMUP_BAND, opacity=0.45).encode(x=at, x2="end:Q")]
