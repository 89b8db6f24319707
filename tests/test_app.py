"""The dashboard through Streamlit's AppTest: first render, a Quick demo run, GPU guard, bad settings.

The History and Scaling views have their own files (test_history_app.py, test_scaling_app.py); all
three reach a view with page(). AppTest runs no fragment ticks, so settle() stands in for them: it
waits for the page's jobs to finish, then reruns the page, as the live fragment does in a browser.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core import probe
from core.config import ConfigError, TrainConfig
from core.engine import data
from core.engine.devices import GPU_ADVICE
from core.results import speedup_sentence
from tests.conftest import ROOT, require
from ui import live, views
from ui.resources import get_runner, get_store
from ui.watcher import Watch

APP = str(ROOT / "streamlit_app.py")
# The hardware check imports TensorFlow in a subprocess: seconds, more on a busy machine.
PROBE_WAIT_S = 120


VIEWS = {"Train": "ui/train.py", "History": "ui/history.py", "Scaling": "ui/scaling.py", "Devices": "ui/devices.py"}


def page(view: str = "Train", at: AppTest | None = None) -> AppTest:
    """One view of the page, drawn: in `at`'s session, or in a fresh browser session after the hardware check."""
    if at is None:
        hw = probe.wait(PROBE_WAIT_S)
        assert hw.state == probe.READY, hw.message
        at = AppTest.from_file(APP, default_timeout=30).run()
    return at.switch_page(VIEWS[view]).run()


def settle(at: AppTest, kind: str = "train", timeout: float = 180) -> AppTest:
    """Wait until the jobs the page shows have finished and are stored, then rerun the page."""
    ids = at.session_state[kind].ids
    for run_id in ids:
        get_runner().wait(run_id, timeout)
    stored = get_store().get if kind == "train" else get_store().get_sweep
    deadline = time.monotonic() + 10  # the store writes a job's end just after the runner reports it
    while not all((r := stored(i)) is not None and r.status != "running" for i in ids):
        assert time.monotonic() < deadline, "the store did not record the finished jobs"
        time.sleep(0.05)
    return at.run()


@pytest.fixture()
def at() -> AppTest:
    """The Train view after the hardware check has answered (here: no GPU)."""
    return page("Train")


def chart_specs(node) -> list[tuple[dict, list[dict]]]:
    """Each chart's Vega-Lite spec and its data rows (Streamlit ships the data as Arrow), in a page or a tab."""
    found = []
    for chart in node.get("vega_lite_chart"):
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


def test_quick_demo_without_a_gpu_compares_plain_fit_and_the_fast_path_on_the_cpu(at, fashion_mnist):
    at.button(key="preset_Quick demo").click().run()
    assert at.session_state["model"] == "mlp" and at.session_state["epochs"] == 3
    # No GPU here: the demo still compares two runs, plain model.fit first (the baseline).
    assert at.session_state["mode"] == "fit:cpu"
    at.button(key="run").click().run()
    status = " ".join(m.value for m in at.markdown)
    assert "CPU (plain fit): " in status and "CPU (multi-step loop): " in status  # live: epochs or "next"
    train = settle(at)
    assert not at.exception
    assert not train.error
    epochs = at.session_state["epochs"]
    status = " ".join(m.value for m in train.markdown)
    assert f"CPU (plain fit): done, {epochs} epochs" in status
    assert f"CPU (multi-step loop): done, {epochs} epochs" in status
    assert "Queue — empty" in " ".join(c.value for c in at.caption)

    (acc_spec, acc_rows), (time_spec, time_rows) = chart_specs(train)
    acc, secs = encoding(acc_spec), encoding(time_spec)
    assert acc["x"]["field"] == "epoch" and acc["y"]["field"] == "accuracy"
    assert secs["x"]["field"] == "epoch" and secs["y"]["field"] == "seconds"
    assert acc["color"]["field"] == secs["color"]["field"] == "series"
    series = ["CPU (plain fit)", "CPU (multi-step loop)"]
    assert acc["color"]["scale"]["domain"] == series
    assert {r["series"] for r in acc_rows} == {r["series"] for r in time_rows} == set(series)
    for name in series:
        mine = [r for r in time_rows if r["series"] == name]
        assert [r["epoch"] for r in mine] == list(range(1, epochs + 1))
        assert [r["warmup"] for r in mine] == [True] + [False] * (epochs - 1)
        test_acc = [r["accuracy"] for r in acc_rows if r["data"] == "Test" and r["series"] == name]
        # An MLP on 20,000 Fashion-MNIST images: well above chance (10%) after one epoch.
        assert len(test_acc) == epochs and min(test_acc) > 0.6

    results = [get_runner().status(i).result for i in at.session_state["train"].ids]
    assert [r.config["execution"] for r in results] == ["keras-fit", "multi-step-loop"]
    assert all(r.status == "completed" and r.device["variables_on"] == "CPU:0" for r in results)
    # Six metrics per run, in the order the runs are listed.
    labels = ["Final test accuracy", "Median epoch (2+)", "Warm-up cost", "Samples / s", "GFLOP/s", "Share of peak"]
    metrics = [(m.label, m.value) for m in train.metric]
    assert [label for label, _ in metrics] == labels * 2
    for result, values in zip(results, (metrics[:6], metrics[6:]), strict=True):
        shown = dict(values)
        assert shown["Final test accuracy"] == f"{result.final_test_accuracy():.1%}"
        assert shown["Median epoch (2+)"] == f"{result.median_epoch_seconds():.3f} s"
        gflops, share = views.achieved(result)
        # Achieved GFLOP/s is the model's FLOPs per sample times its speed, and a fraction of the measured peak.
        assert gflops > 0 and 0 < share < 1
        assert share == pytest.approx(gflops / result.device["peak_gflops"])
        assert shown["GFLOP/s"] == f"{gflops:,.1f}"
        assert shown["Share of peak"] == (f"{share:.1%}" if share >= 0.001 else f"{share:.2%}")
    sentence = speedup_sentence(results[0], results[1], *series)
    assert f"### {views.plain(sentence)}" in [m.value for m in train.markdown]
    assert sentence.startswith("CPU (multi-step loop) is ")

    downloads = [b.label for b in train.download_button]
    assert downloads == ["CPU (plain fit) run · JSON", "CPU (multi-step loop) run · JSON", "All epochs · CSV"]
    devices = " ".join(m.value for m in page("Devices", at).markdown)
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
    assert "train" not in at.session_state or not at.session_state["train"].own
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
    at.session_state["train"] = Watch(ids, own=True)
    at.run()
    assert [e.value for e in at.error] == [f"CPU:7: {failed.error}"]
    assert failed.error.startswith("There is no cpu:7") and "\n" not in failed.error
    assert "CPU:7: failed" in " ".join(m.value for m in at.markdown)
    assert not at.exception
