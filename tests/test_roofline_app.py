"""The Train view after a run: the roofline with the run's point, where its epoch goes, and the bound in words."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pytest

from core import roofline, why
from tests.test_app import page, run_one_softmax
from ui import words


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
    assert {"Roofline", "Where an epoch goes"} <= set(charts)

    rows = [r for data in charts["Roofline"] for r in data]
    (dot,) = [r for r in rows if "run" in r]
    assert dot["intensity"] == pytest.approx(point.intensity) and dot["gflops"] == pytest.approx(point.gflops)
    assert (dot["model"], dot["batch_size"], dot["device"]) == ("softmax", 50, "CPU")
    roof = [r for r in rows if "run" not in r]
    assert max(r["gflops"] for r in roof) == pytest.approx(result.device["peak_gflops"])

    parts = {r["part"]: r["seconds"] for data in charts["Where an epoch goes"] for r in data if "part" in r}
    split = why.run_split(result)
    # The page sends its charts unchecked (ui.charts.show): this one meets Vega-Lite's schema.
    from ui.roofline import breakdown_chart

    assert breakdown_chart([split], ["CPU"]).to_dict(validate=True)["datasets"]
    assert parts["products at these shapes"] == pytest.approx(split.compute)
    assert parts["other per-sample work"] == pytest.approx(split.other)
    # The bar is the epoch: its measured parts and what they leave unexplained (shown where positive).
    assert sum(parts.values()) == pytest.approx(max(split.epoch, sum(split.parts().values())))
    sentence = words.plain(f"{why.bound_sentence(split)} {why.advice(split)}")
    assert any(sentence in m.value for m in at.markdown)
    assert any(c.value.startswith("Each part is measured before the run") for c in at.caption)
