"""Where a run's step goes, as its trace read it, for Train: a stacked bar per run of the traced step's parts with the
run's own timer beside it, and the sentences of the why (core.analysis.why_sentences): the bound and the trace's check,
the line and its test, the floors, the advice."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from core.analysis import why, why_sentences
from core.language.i18n import N_, _
from ui import charts, run_text

CAVEAT = N_(
    "Where a step goes is read from a trace of TensorFlow's profiler over a window of a throwaway copy of the step, "
    "taken after epoch 1 outside the timed epochs; its step is held against the run's own timer. The line is a "
    "model, tested on a batch size it was not fitted on; the floors are each measured alone."
)
# Each part's name and colour: ops in Okabe-Ito colours, the gaps between them in greys.
PARTS = {
    "matmul": (N_("matmul/conv"), "#0072B2"),
    "elementwise": (N_("element-wise"), "#009E73"),
    "loss": (N_("the loss"), "#CC79A7"),
    "optimizer": (N_("the optimizer's update"), "#E69F00"),
    "input": (N_("input and copies"), "#56B4E9"),
    "runtime": (N_("gap: runtime"), "#555555"),
    "launch": (N_("gap: launches"), "#777777"),
    "dispatch": (N_("gap: dispatch"), "#999999"),
    "sync": (N_("gap: sync"), "#BBBBBB"),
    "python": (N_("gap: Python"), "#DDDDDD"),
}


def trace_frame(whys: Sequence[why.Why], runs: Sequence[str]) -> pd.DataFrame:
    """One row per run and part of its traced step (µs per step); parts under half a µs are left out."""
    rows = []
    for w, run in zip(whys, runs, strict=True):
        parts = {**w.trace.ops, **w.trace.gaps}
        for i, (name, (words, _colour)) in enumerate(PARTS.items()):
            if parts.get(name, 0.0) >= 5e-7:
                rows.append(
                    {
                        "run": run,
                        "part": _(words),
                        "order": i,
                        "us": parts[name] * 1e6,
                        "step_us": w.trace.step_seconds * 1e6,
                    }
                )
    return pd.DataFrame(rows, columns=["run", "part", "order", "us", "step_us"])


def trace_chart(whys: Sequence[why.Why], runs: Sequence[str]):
    """A stacked bar per run of where its traced step goes, and a black tick at the run's own timed step."""
    frame = trace_frame(whys, runs)
    present = set(frame["part"])  # a legend of the parts drawn only, one a row: nothing cut at half of 1280 px
    shown = [(_(p), c) for p, c in PARTS.values() if _(p) in present]
    names, colours = [n for n, _c in shown], [c for _n, c in shown]
    colour = alt.Color(
        "part:N",
        title=None,
        sort=names,
        scale=alt.Scale(domain=names or ["-"], range=colours or [charts.INK]),
        legend=alt.Legend(orient="bottom", columns=1, labelLimit=0),
    )
    # A run's label on two lines, device then what differs: "CPU" / "(multi-step loop, XLA)", never cut.
    y = alt.Y(
        "run:N",
        title=None,
        sort=list(runs),
        axis=alt.Axis(labelLimit=0, labelExpr="split(replace(datum.label, ' (', '\\n('), '\\n')"),
    )
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("sum(us):Q", title=_("µs per step"), stack="zero", axis=alt.Axis(labelFlush=True, tickCount=4)),
            y=y,
            color=colour,
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("run:N", title=_("Run")),
                alt.Tooltip("part:N", title=_("Part")),
                alt.Tooltip("us:Q", title=_("µs per step"), format=",.1f"),
                alt.Tooltip("step_us:Q", title=_("Traced step (µs)"), format=",.1f"),
            ],
        )
    )
    timers = pd.DataFrame(
        [{"run": r, "timer_us": w.timer * 1e6} for w, r in zip(whys, runs, strict=True) if w.timer],
        columns=["run", "timer_us"],
    )
    tick = (
        alt.Chart(timers)
        .mark_tick(color=charts.INK, thickness=3, size=34)
        .encode(
            x="timer_us:Q", y=y, tooltip=[alt.Tooltip("timer_us:Q", title=_("Run's own timer (µs)"), format=",.1f")]
        )
    )
    subtitle = _("profiler, on a copy; greys: gaps; | the run's timer")
    styled = charts._style(alt.layer(bars, tick), _("Where a step goes (traced)"), subtitle)
    # Room at the right for the last tick's label: centred on a tick near the domain's end it passed the edge (CI).
    return styled.properties(padding={"left": 5, "top": 5, "bottom": 5, "right": 24})


def sentences_ui(explained: Sequence[tuple], not_measured: Callable, limits_note: Callable) -> None:
    """Each run's why in sentences: (Why, RunResult, label) each; what was not measured and a departing peak said."""
    for w, r, label in explained:
        if w.trace is None and r.measured.trace_error:  # said in English by the worker: a known sentence reads back
            said = _("{label}: the profiler traced no window of its step: {why}.")
            st.caption(run_text.plain(said.format(label=label, why=_(r.measured.trace_error))))
        said = [x for x in (why_sentences.bound_sentence(w), why_sentences.trace_check(w)) if x]
        st.markdown(f"- **{run_text.plain(label)}**: {run_text.plain(' '.join(said))}")
        for extra in (why_sentences.line_sentence(w), why_sentences.floors_sentence(w), why_sentences.advice(w)):
            if extra:
                st.caption(run_text.plain(extra))
        if unmeasured := not_measured(r):
            st.caption(
                run_text.plain(_("{label}: {unmeasured} not measured.").format(label=label, unmeasured=unmeasured))
            )
        if note := limits_note(r):
            st.caption(run_text.plain(_("{label}: {words}").format(label=label, words=note)))
    st.caption(_(CAVEAT))
