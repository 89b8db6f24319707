"""The Scaling view: a tiny CPU sweep through the runner, its chart and table; the GPU guard; an imported sweep.

Plus the view's pure parts (ui.charts.throughput_chart, ui.run_text, ui.tables, ui.live.queue_line) on hand-made points.
"""

from __future__ import annotations

import uuid

import pytest

from core.history.store import get_store
from core.results import SweepPoint, SweepResult, points_frame
from core.results.crossover import crossover_sentence
from core.runner import JobStatus
from core.settings.config import SweepConfig, TrainConfig
from tests.sample_runs import SERVER_HOST
from tests.test_app import chart_specs, page, settle
from ui import charts, live, run_text
from ui.resources import get_runner


def point(device: str, batch: int, rate: float, spread: float = 0.1) -> SweepPoint:
    low, high = rate * (1 - spread), rate * (1 + spread)
    return SweepPoint(device, batch, 10, rate, low, high, (low, rate, high), step_ms=batch / rate * 1000)


def server_sweep() -> SweepResult:
    """A CPU and GPU sweep from a GPU server, shaped as `python -m core sweep --json` writes it."""
    config = SweepConfig(devices=("cpu", "gpu"), model="softmax", batch_sizes=(16, 64, 256), repeats=3)
    flops = 31_380  # softmax's training FLOPs per sample (tests/test_flops.py works it by hand)
    rates = {"cpu": (1e5, 3e5, 5e5), "gpu": (5e4, 4e5, 4e6)}  # the GPU overtakes the CPU at batch 64
    return SweepResult(
        config=config.to_dict(),
        host=dict(SERVER_HOST),
        devices={
            name: {
                "requested": name,
                "tf_device": f"/{name.upper()}:0",
                "name": name,
                "label": name.upper(),
                "variables_on": f"{name.upper()}:0",
                "peak_gflops": peak,
                "peak_matrix_size": 1024,
            }
            for name, peak in (("cpu", 200.0), ("gpu", 50_000.0))
        },
        model={"name": "softmax", "hidden_units": 128, "train_flops_per_sample": flops},
        points=[point(d, b, r) for d, rs in rates.items() for b, r in zip(config.batch_sizes, rs, strict=True)],
        status="completed",
        started_at="2026-11-30T07:00:00.000+00:00",
        finished_at="2026-11-30T07:01:00.000+00:00",
        run_id=f"sweep-{uuid.uuid4().hex[:8]}",
    )


def test_a_tiny_cpu_sweep_runs_through_the_runner_and_draws_throughput_against_batch_size():
    at = page("Scaling")
    at.selectbox(key="sw_model").set_value("softmax")
    at.multiselect(key="sw_batches").set_value([16, 64])
    at.number_input(key="sw_repeats").set_value(2)
    at.number_input(key="sw_steps").set_value(5)
    at.run()
    assert at.checkbox(key="sw_dev_cpu").value and not at.button(key="sw_run").disabled
    at.button(key="sw_run").click().run()
    assert at.button(key="sw_run").disabled and not at.button(key="sw_stop").disabled
    settle(at, "sweep")
    assert not at.exception
    assert not at.button(key="sw_run").disabled and at.button(key="sw_stop").disabled

    sweep = get_runner().status(at.session_state["sweep"].ids[0])
    assert sweep.state == "completed" and sweep.unit == "point" and sweep.done == 2
    points = list(sweep.items)
    assert [(p.device, p.batch_size, p.steps) for p in points] == [("cpu", 16, 5), ("cpu", 64, 5)]
    scaling = at
    assert "**Sweep: done, 2 points**" in [m.value for m in scaling.markdown]

    # Stored by the runner's store listener, and the page shows the stored copy.
    assert get_store().get_sweep(sweep.run_id) is not None
    assert at.selectbox(key="sweep_pick").value == sweep.run_id
    (spec, rows), *_ = chart_specs(scaling)  # the throughput chart first (the roofline may follow)
    line = spec["layer"][0]["encoding"]
    assert line["x"]["field"] == "batch_size" and line["x"]["scale"]["type"] == "log"
    assert line["y"]["field"] == "samples_per_second" and line["y"]["scale"]["type"] == "log"
    assert line["color"]["field"] == "series" and line["color"]["scale"]["domain"] == ["CPU"]
    assert [(r["series"], r["batch_size"]) for r in rows] == [("CPU", 16), ("CPU", 64)]
    for r, p in zip(rows, points, strict=True):
        assert r["samples_per_second"] == pytest.approx(p.samples_per_second) and p.samples_per_second > 0
        assert r["samples_per_second_min"] <= r["samples_per_second"] <= r["samples_per_second_max"]
    # One device: the sentence says a crossover needs two.
    assert crossover_sentence(points) in [c.value for c in scaling.caption]

    (table,) = scaling.dataframe
    shown = table.value
    assert list(shown["Batch"]) == [16, 64]
    assert list(shown["Samples/s"]) == [round(p.samples_per_second) for p in points]
    assert list(shown["Share of peak"]) == pytest.approx([p.utilisation for p in points])
    assert all(0 < u < 1 for u in shown["Share of peak"])
    assert [b.label for b in scaling.download_button] == ["Download sweep · JSON", "Download sweep · CSV"]


def test_a_gpu_sweep_cannot_be_started_on_a_machine_without_one():
    at = page("Scaling")
    gpu = at.checkbox(key="sw_dev_gpu_0")
    assert gpu.disabled and not gpu.value
    assert "unavailable: no GPU found on this machine" in [c.value for c in at.caption]
    # A stale page whose GPU box was ticked: refused when Run sweep is pressed, nothing queued.
    jobs_before = len(get_runner().jobs())
    sweep_before = at.session_state["sweep"].ids if "sweep" in at.session_state else None
    at.session_state["sw_dev_gpu_0"] = True
    at.button(key="sw_run").click().run()
    errors = [e.value for e in at.error]
    assert "GPU cannot be swept here: no GPU found on this machine." in errors
    assert len(get_runner().jobs()) == jobs_before
    assert (at.session_state["sweep"].ids if "sweep" in at.session_state else None) == sweep_before
    assert not at.exception


def test_an_uploaded_server_sweep_shows_both_devices_and_where_the_gpu_overtakes():
    sweep = server_sweep()
    at = page("History")
    at.file_uploader(key="history_upload").set_value(("sweep.json", sweep.to_json().encode(), "application/json"))
    at.run()
    (done,) = at.success
    assert done.value == run_text.plain(
        f"Imported sweep {sweep.run_id} from gpu-server (cpu, gpu, completed). It is in the Scaling view."
    )
    scaling = page("Scaling", at)
    assert at.selectbox(key="sweep_pick").value == sweep.run_id
    (spec, rows), *_ = chart_specs(scaling)  # the throughput chart first (the roofline may follow)
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["CPU", "GPU"]
    assert {(r["series"], r["batch_size"]) for r in rows} == {(d, b) for d in ("CPU", "GPU") for b in (16, 64, 256)}
    assert "### GPU faster from batch 64." in [m.value for m in scaling.markdown]
    # The measured reason the GPU idles at batch 16: most of the step is not arithmetic.
    assert any(m.value.startswith("- GPU at batch 16: a step is") for m in scaling.markdown)
    assert not at.exception


# -- the pure parts ---------------------------------------------------------------------------
def test_throughput_chart_has_log_axes_one_line_per_device_and_the_spread_as_bars():
    points = [point("cpu", 16, 1e5), point("cpu", 64, 3e5), point("gpu", 16, 5e4), point("gpu", 64, 4e5)]
    failed = SweepPoint("gpu", 256, 0, None, None, None, error="Out of memory on gpu from batch 256.")
    spec = charts.throughput_chart(points_frame([*points, failed])).to_dict()
    line, spread = (layer["encoding"] for layer in spec["layer"])
    assert spec["layer"][1]["mark"]["type"] == "errorbar"
    assert (spread["y"]["field"], spread["y2"]["field"]) == ("samples_per_second_min", "samples_per_second_max")
    assert line["x"]["scale"]["type"] == line["y"]["scale"]["type"] == "log"
    assert line["x"]["axis"]["values"] == [16, 64]  # the measured batch sizes, not the failed one
    assert line["color"]["scale"]["domain"] == ["CPU", "GPU"]
    (rows,) = spec["datasets"].values()
    assert len(rows) == 4 and all(r["samples_per_second"] > 0 for r in rows)


def test_idle_sentences_compare_a_steps_arithmetic_at_peak_with_its_measured_time():
    # 1,000 FLOPs per sample at batch 100 is 0.1 MFLOP: 1 µs at 100 GFLOP/s, against a 100 µs step.
    slow = SweepPoint("cpu", 100, 10, 1e6, 1e6, 1e6, step_ms=0.1)
    bigger = SweepPoint("cpu", 1000, 10, 2e6, 2e6, 2e6, step_ms=0.5)
    (sentence,) = run_text.idle_sentences([bigger, slow], 1000, {"cpu": {"peak_gflops": 100.0}})
    assert sentence == (
        "CPU at batch 100: a step is 0.10 MFLOP, 1.0 µs at this device's large-square-matmul peak of "
        "100 GFLOP/s, but it took 100 µs: at that peak the arithmetic would be 1.0% of the step (matmuls this small "
        "run far below it; the Train view's why times them at their shapes)."
    )
    assert run_text.idle_sentences([slow], None, {}) == []


def test_the_queue_line_says_what_runs_now_and_what_waits_by_position():
    train = TrainConfig(model="mlp", epochs=3)
    sweep = SweepConfig(devices=("cpu",), model="softmax", batch_sizes=(16, 64))
    running = JobStatus("a1", "running", None, 1, 3, (), None, None, train)
    waiting = JobStatus("b2", "queued", 1, 0, 2, (), None, None, sweep, unit="point")
    assert live.queue_line([running, waiting], {"b2"}) == (
        "Queue — now: training mlp on CPU, epoch 2 of 3  ·  waiting: 1. sweeping softmax on CPU (this page)"
    )
    assert live.queue_line([], set()).startswith("Queue — empty")
