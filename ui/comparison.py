"""Runs side by side, as Train and History show them: the two charts, per-run metrics, the speedup sentence."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.results import RunResult, speedup_sentence
from ui import charts, views


def charts_ui(frame: pd.DataFrame, epochs_total: int) -> None:
    """Accuracy and seconds per epoch, side by side, for the runs in `frame` (charts.epochs_frame)."""
    if len(frame) == 0:
        st.info("The charts appear when epoch 1 finishes (it includes tracing and compilation).")
        return
    left, right = st.columns(2)
    left.altair_chart(charts.accuracy_chart(frame, epochs_total), width="stretch")
    right.altair_chart(charts.epoch_time_chart(frame, epochs_total), width="stretch")


def summary_ui(results: list[RunResult], labels: list[str], pair: tuple[int, int] | None) -> None:
    """Per run: final accuracy, median steady epoch, warm-up cost, samples/s, GFLOP/s and share of peak.

    pair: (baseline, other) indexes for the speedup sentence, or None for no sentence.
    """
    for result, label in zip(results, labels, strict=True):
        if result.epochs:
            metrics_ui(result, label)
    if pair and all(results[i].epochs for i in pair):
        (base, other) = pair
        st.markdown(f"### {views.plain(speedup_sentence(results[base], results[other], labels[base], labels[other]))}")


def metrics_ui(result: RunResult, label: str) -> None:
    """One run's heading and its six numbers."""
    st.markdown(f"#### {views.plain(label)} · variables on {views.plain(result.device.get('variables_on') or '?')}")
    cols = st.columns(6)
    median, warm, rate = result.median_epoch_seconds(), result.warmup_seconds(), result.median_samples_per_second()
    gflops, share = views.achieved(result)
    peak = result.device.get("peak_gflops")
    cols[0].metric("Final test accuracy", f"{result.final_test_accuracy():.1%}")
    cols[1].metric("Median epoch (2+)", f"{median:.3f} s" if median else "—", help="Steady state: epochs 2..N.")
    cols[2].metric("Warm-up cost", f"{warm:+.2f} s" if warm is not None else "—", help="Epoch 1 minus the median.")
    cols[3].metric("Samples / s", f"{rate:,.0f}" if rate else "—", help="Median of epochs 2..N, training only.")
    cols[4].metric(
        "GFLOP/s",
        f"{gflops:,.1f}" if gflops else "—",
        help="Achieved: the model's training FLOPs per sample (forward and backward, counted from its layers) "
        "times samples/s; median of epochs 2..N.",
    )
    cols[5].metric(
        "Share of peak",
        (f"{share:.1%}" if share >= 0.001 else f"{share:.2%}") if share else "—",
        help=f"Achieved GFLOP/s ÷ this device's peak, {peak:,.0f} GFLOP/s from a large matrix multiply."
        if peak
        else "The device's peak was not measured.",
    )


def compare_ui(results: list[RunResult], labels: list[str], pair: tuple[int, int] | None) -> None:
    """The runs' charts, then their summary: what Train shows live and History shows for picked runs."""
    frame = charts.epochs_frame([r.to_frame() for r in results], labels)
    charts_ui(frame, max((r.config.get("epochs") or len(r.epochs) for r in results), default=1))
    summary_ui(results, labels, pair)
