"""The dashboard through Streamlit's AppTest: first render, a Quick demo run, GPU guard, bad settings."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core import data, live, probe
from core.config import ConfigError, TrainConfig
from core.devices import GPU_ADVICE
from core.runner import get_runner
from tests.conftest import ROOT, require

APP = str(ROOT / "streamlit_app.py")
# The hardware check imports TensorFlow in a subprocess: seconds, more on a busy machine.
PROBE_WAIT_S = 120


@pytest.fixture()
def at() -> AppTest:
    """The page after the hardware check has answered (here: no GPU)."""
    hw = probe.wait(PROBE_WAIT_S)
    assert hw.state == probe.READY, hw.message
    return AppTest.from_file(APP, default_timeout=30).run()


def chart_specs(at: AppTest) -> list[tuple[dict, list[dict]]]:
    """Each chart's Vega-Lite spec and its data rows (Streamlit ships the data as Arrow)."""
    found = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        (dataset,) = chart.proto.datasets
        table = pa.ipc.open_stream(io.BytesIO(dataset.data.data)).read_all()
        found.append((spec, table.to_pylist()))
    return found


def encoding(spec: dict) -> dict:
    """The encoding of a single chart, or of a layered chart's first (data) layer."""
    return spec["encoding"] if "encoding" in spec else spec["layer"][0]["encoding"]


def test_first_render_does_not_import_tensorflow_nor_wait_for_the_gpu_check():
    # A fresh interpreter: other tests in this process import TensorFlow.
    script = """
import json, sys, time
from streamlit.testing.v1 import AppTest
from core import probe
began = time.perf_counter()
at = AppTest.from_file("streamlit_app.py", default_timeout=60).run()
first = {
    "seconds": time.perf_counter() - began,
    "probe": probe.result().state,
    "tensorflow": "tensorflow" in sys.modules,
    "exceptions": [e.value for e in at.exception],
    "captions": [c.value for c in at.caption],
    "run_disabled": at.button(key="run").disabled,
    "modes": list(at.radio(key="mode").proto.captions),
}
probe.wait(120)
at.run()
after = {
    "probe": probe.result().state,
    "tensorflow": "tensorflow" in sys.modules,
    "exceptions": [e.value for e in at.exception],
    "modes": list(at.radio(key="mode").proto.captions),
}
print(json.dumps({"first": first, "after": after}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    first, after = report["first"], report["after"]
    assert first["exceptions"] == [] and after["exceptions"] == []
    assert not first["tensorflow"] and not after["tensorflow"]
    # The page was drawn while the subprocess was still importing TensorFlow.
    assert first["probe"] == probe.CHECKING
    assert "Checking for GPUs…" in first["captions"]
    assert "unavailable: still checking for GPUs" in first["modes"]
    assert first["run_disabled"] is False, "CPU training must not wait for the GPU check"
    assert after["probe"] == probe.READY
    assert "unavailable: no GPU found on this machine" in after["modes"]


def test_quick_demo_trains_and_draws_both_charts_one_series_per_device(at, fashion_mnist):
    at.button(key="preset_Quick demo").click().run()
    assert at.session_state["model"] == "mlp" and at.session_state["epochs"] == 3
    at.button(key="run").click().run(timeout=180)

    assert not at.exception
    assert not at.error
    epochs = at.session_state["epochs"]
    status = " ".join(m.value for m in at.markdown)
    assert f"CPU: done, {epochs} epochs" in status

    (acc_spec, acc_rows), (time_spec, time_rows) = chart_specs(at)
    acc, secs = encoding(acc_spec), encoding(time_spec)
    assert acc["x"]["field"] == "epoch" and acc["y"]["field"] == "accuracy"
    assert secs["x"]["field"] == "epoch" and secs["y"]["field"] == "seconds"
    assert acc["color"]["field"] == secs["color"]["field"] == "series"
    assert {r["series"] for r in acc_rows} == {r["series"] for r in time_rows} == {"CPU"}
    assert sorted({r["epoch"] for r in time_rows}) == list(range(1, epochs + 1))
    assert [r["warmup"] for r in time_rows] == [True] + [False] * (epochs - 1)
    test_acc = [r["accuracy"] for r in acc_rows if r["data"] == "Test"]
    # An MLP on 20,000 Fashion-MNIST images: well above chance (10%) after one epoch.
    assert len(test_acc) == epochs and min(test_acc) > 0.6

    metrics = {m.label: m.value for m in at.metric}
    assert set(metrics) == {"Final test accuracy", "Median epoch (2+)", "Warm-up cost", "Samples / s"}
    assert metrics["Final test accuracy"] == f"{test_acc[-1]:.1%}"
    assert metrics["Median epoch (2+)"].endswith(" s")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["CPU run · JSON", "All epochs · CSV"]
    (run_id,) = at.session_state["runs"]
    result = get_runner().status(run_id).result
    assert result.status == "completed" and result.device["variables_on"] == "CPU:0"
    devices = " ".join(m.value for m in at.markdown)
    assert "variables lived on CPU:0" in devices


def test_gpu_modes_are_visibly_unavailable_and_cannot_start_a_run(at):
    captions = list(at.radio(key="mode").proto.captions)
    options = at.radio(key="mode").options
    for label in ("GPU", "CPU vs GPU"):
        assert captions[options.index(label)] == "unavailable: no GPU found on this machine"
    assert any(GPU_ADVICE in c.value for c in at.caption)

    jobs_before = len(get_runner().jobs())
    at.radio(key="mode").set_value("cpu-vs-gpu").run()
    assert at.button(key="run").disabled
    (warning,) = at.warning
    assert warning.value.startswith("CPU vs GPU cannot run here: no GPU found on this machine.")
    assert GPU_ADVICE in warning.value

    # A stale page (its Run button drawn enabled) asking for a GPU run: refused at submit time.
    at.radio(key="mode").set_value("cpu").run()
    assert not at.button(key="run").disabled
    at.session_state["mode"] = "gpu:0"
    at.button(key="run").click().run()
    assert "GPU cannot run here: no GPU found on this machine." in [e.value for e in at.error]
    assert "runs" not in at.session_state
    assert len(get_runner().jobs()) == jobs_before
    assert not at.exception


def test_a_bad_setting_shows_its_one_sentence_and_disables_run(at):
    with pytest.raises(ConfigError) as expected:
        TrainConfig(train_subset=1000, batch_size=5000)
    # Training samples (under Advanced) smaller than the batch: a cross-field check only TrainConfig makes.
    at.number_input(key="train_subset").set_value(1000)
    at.number_input(key="batch_size").set_value(5000).run()
    assert [e.value for e in at.error] == [str(expected.value)]
    assert "batch_size" in str(expected.value)
    assert at.button(key="run").disabled
    assert not at.exception

    at.number_input(key="batch_size").set_value(100).run()
    assert not at.error and not at.button(key="run").disabled


def test_a_missing_dataset_says_why_and_names_the_ones_available(at):
    require(data.availability("fashion_mnist").available, "Fashion-MNIST (apt-get install dataset-fashion-mnist)")
    mnist = data.availability("mnist")
    if mnist.available:
        pytest.skip("MNIST is cached on this machine, so it is not missing")
    captions = list(at.radio(key="dataset").proto.captions)
    assert captions[at.radio(key="dataset").options.index("MNIST")] == mnist.reason
    at.radio(key="dataset").set_value("mnist").run()
    (info,) = at.info
    assert info.value.startswith("MNIST is not on this machine yet")
    assert "available offline: Fashion-MNIST, Synthetic" in info.value
    assert not at.exception


def test_a_failed_run_shows_its_one_sentence_not_a_traceback(at):
    # A device TrainConfig accepts but this machine lacks: the run fails as it starts.
    config = TrainConfig(device="cpu:7", dataset="synthetic", train_subset=100, batch_size=10, epochs=1)
    runner = get_runner()
    ids = live.submit_group(runner, [config])
    failed = runner.wait(ids[0], 120)
    assert failed.state == "failed"
    at.session_state["runs"] = ids
    at.run()
    assert [e.value for e in at.error] == [f"CPU:7: {failed.error}"]
    assert failed.error.startswith("There is no cpu:7") and "\n" not in failed.error
    assert "CPU:7: failed" in " ".join(m.value for m in at.markdown)
    assert not at.exception
