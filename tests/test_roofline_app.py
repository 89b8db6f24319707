"""The Train view after a run: the roofline with the run's point, where its epoch goes, and the bound in words."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pytest

from core.analysis import roofline, why, why_sentences
from tests.test_app import page, run_one_softmax
from ui import run_text


def charts_by_title(node) -> dict[str, list[list[dict]]]:
    """Each chart's title -> its datasets' rows (Streamlit ships them as Arrow)."""
    found = {}
    for chart in node.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec.get("title", {}).get("text") if isinstance(spec.get("title"), dict) else spec.get("title")
        found[title] = [
            pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pylist() for d in chart.proto.datasets
        ]
    return found


def test_after_a_run_the_roofline_and_the_epoch_breakdown_show_the_runs_point():
    at = page("Train")
    result = run_one_softmax(at)
    point = roofline.run_point(result, "CPU")
    charts = charts_by_title(at)
    assert {"Roofline", "Where a step goes (traced)"} <= set(charts)

    rows = [r for data in charts["Roofline"] for r in data]
    (dot,) = [r for r in rows if "run" in r]
    assert dot["intensity"] == pytest.approx(point.intensity) and dot["gflops"] == pytest.approx(point.gflops)
    assert (dot["model"], dot["batch_size"], dot["device"]) == ("softmax", 50, "CPU")
    roof = [r for r in rows if "run" not in r]
    assert max(r["gflops"] for r in roof) == pytest.approx(result.measured.limits.peak_gflops)

    rows = [r for data in charts["Where a step goes (traced)"] for r in data]
    parts = {r["part"]: r["us"] for r in rows if "part" in r}
    w = why.explain(result)
    # The page sends its charts unchecked (ui.charts.show): this one meets Vega-Lite's schema.
    from ui.step_trace import trace_chart

    assert trace_chart([w], ["CPU"]).to_dict(validate=True)["datasets"]
    assert parts["matmul/conv"] == pytest.approx(w.trace.ops["matmul"] * 1e6)
    # The bar is the trace's step, read part by part from the trace; the tick is the run's own timer beside it.
    assert sum(parts.values()) == pytest.approx(w.trace.step_seconds * 1e6, rel=0.01)
    assert [r["timer_us"] for r in rows if "timer_us" in r] == [pytest.approx(w.timer * 1e6)]
    sentence = run_text.plain(f"{why_sentences.bound_sentence(w)} {why_sentences.trace_check(w)}")
    assert any(sentence in m.value for m in at.markdown)
    assert any(c.value.startswith("Where a step goes is read from a trace") for c in at.caption)
