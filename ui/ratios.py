"""The ratio tables under the charts: more than two runs along one axis (each value over the first), or a chain of
changes made one at a time (each run over the run before it: what each change bought)."""

from __future__ import annotations

import streamlit as st

from core.analysis import changes, compare
from core.language.i18n import _
from core.results import RunResult
from core.settings import axes
from ui import run_text


def ratios_ui(results: list[RunResult], labels: list[str]) -> None:
    """More than two runs along one axis: each value's steady samples/s and its speedup over the first value."""
    if len(results) <= 2 or not all(r.epochs for r in results):
        return
    if changes.is_chain(results):
        return steps_ui(results, labels)
    names, where = axes.value_names([r.config for r in results]) or (labels, "")
    head = _("| Value{where} | Samples / s | Speedup vs {first} |").format(where=where, first=names[0])
    rows = [head, "|---|---|---|"]
    for name, (rate, ratio) in zip(names, compare.ratio_rows(results), strict=True):
        rows.append(f"| {run_text.plain(name)} | {rate} | {ratio} |")
    st.markdown("\n".join(rows))


def steps_ui(results: list[RunResult], labels: list[str]) -> None:
    """A chain of changes: what each run changed, its steady samples/s, and its speedup over the run before it."""
    rows = [_("| Run | Changed | Samples / s | Speedup over the run above |"), "|---|---|---|---|"]
    for label, (changed, rate, ratio) in zip(labels, changes.step_rows(results), strict=True):
        rows.append(f"| {run_text.plain(label)} | {run_text.plain(changed) or '—'} | {rate} | {ratio} |")
    st.markdown("\n".join(rows))
