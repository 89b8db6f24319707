"""The dashboard through Streamlit's AppTest: first render, a Quick demo run, GPU guard, bad settings.

The History and Scaling views have their own files (test_history_app.py, test_scaling_app.py); all
three reach a view with page(). AppTest runs no fragment ticks, so settle() stands in for them: it
waits for the page's jobs to finish, then reruns the page, as the live fragment does in a browser.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image as PILImage
from streamlit.testing.v1 import AppTest

from core.analysis import compare
from core.engine import data
from core.engine.devices import GPU_ADVICE
from core.export import snippet
from core.machine import hardware_check
from core.results import steady_epoch_seconds
from core.settings import device_modes
from core.settings.config import ConfigError, TrainConfig
from core.settings.presets import PRESETS
from tests.conftest import ROOT, require, wait_until
from ui import access, compared, live, run_text, tables
from ui.resources import get_runner, get_store
from ui.watcher import Watch

APP = str(ROOT / "streamlit_app.py")
# The hardware check imports TensorFlow in a subprocess: seconds, more on a busy machine.
PROBE_WAIT_S = 120


VIEWS = {"Train": "ui/train.py", "History": "ui/history.py", "Scaling": "ui/scaling.py", "Devices": "ui/devices.py"}


def page(view: str = "Train", at: AppTest | None = None, address: dict | None = None) -> AppTest:
    """One view of the page, drawn: in `at`'s session, or in a fresh browser session after the hardware check (opened
    at `address`, its query parameters)."""
    if at is None:
        hw = hardware_check.wait(PROBE_WAIT_S)
        assert hw.state == hardware_check.READY, hw.message
        # A ceiling, not a timing: a process's first page imports the UI's libraries, and a CI run once took over 30 s
        # for it while the browser tests' server trained beside it on the 2 cores.
        at = AppTest.from_file(APP, default_timeout=90)
        # This machine's page on `make run` (no token): the presenter. AppTest has no client address.
        at.session_state[access.KEY] = access.check(None, None, None)
        at.query_params.update(address or {})
        at.run()
    # With nothing queued, Run is offered once the workers for the next job wait with TensorFlow imported.
    assert get_runner().jobs() or get_runner().warm(PROBE_WAIT_S)
    return at.switch_page(VIEWS[view]).run()


def settle(at: AppTest, kind: str = "train", timeout: float = 180) -> AppTest:
    """Wait until the jobs the page shows have finished and are stored, then rerun the page."""
    ids = at.session_state[kind].ids
    for run_id in ids:
        get_runner().wait(run_id, timeout)
    stored = get_store().get if kind == "train" else get_store().get_sweep
    # The store writes a job's end just after the runner reports it.
    done = lambda: all((r := stored(i)) is not None and r.status != "running" for i in ids)  # noqa: E731
    wait_until(done, 10, "the store recording the finished jobs")
    assert get_runner().warm(PROBE_WAIT_S)  # the next workers, as the page's own tick waits for them before Run
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
        # The runs' rows: the largest dataset (a layer such as a target line may bring a one-row one).
        tables = [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all() for d in chart.proto.datasets]
        found.append((spec, max(tables, key=len).to_pylist()))
    return found


def encoding(spec: dict) -> dict:
    """The encoding of a single chart, or of a layered chart's first layer that draws the runs (a colour per run)."""
    if "encoding" in spec:
        return spec["encoding"]
    return next(
        la["encoding"] for la in spec["layer"] if la.get("encoding", {}).get("color", {}).get("field") == "series"
    )


def test_first_render_does_not_import_tensorflow_nor_wait_for_the_gpu_check():
    # A fresh interpreter: other tests in this process import TensorFlow.
    script = """
import json, sys, time
from PIL import Image as PILImage
from streamlit.testing.v1 import AppTest
from core.export import snippet
from core.settings import device_modes
from core.machine import hardware_check
from core.analysis import compare
began = time.perf_counter()
at = AppTest.from_file("streamlit_app.py", default_timeout=60).run()
first = {
    "seconds": time.perf_counter() - began,
    "probe": hardware_check.result().state,
    "tensorflow": "tensorflow" in sys.modules,
    "exceptions": [e.value for e in at.exception],
    "captions": [c.value for c in at.caption],
    "run_disabled": at.button(key="run").disabled,
    "modes": list(at.radio(key="mode").proto.captions),
}
from ui.resources import get_runner
get_runner().warm(120)  # the workers that will train, with TensorFlow imported
at.run()
warm = {"probe": hardware_check.result().state, "run_disabled": at.button(key="run").disabled}
hardware_check.wait(120)
at.run()
checked = hardware_check.result()
after = {
    "probe": checked.state,
    "host": {k: checked.host.get(k) for k in ("cpu_cores", "tensorflow", "gpus")},
    "gpus": checked.gpus,
    "tensorflow": "tensorflow" in sys.modules,
    "exceptions": [e.value for e in at.exception],
    "modes": list(at.radio(key="mode").proto.captions),
}
print(json.dumps({"first": first, "warm": warm, "after": after}))
"""
    real_check = {k: v for k, v in os.environ.items() if k != hardware_check.ANSWER_ENV}  # not the session's answer
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=real_check,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    first, warm, after = report["first"], report["warm"], report["after"]
    assert first["exceptions"] == [] and after["exceptions"] == []
    assert not first["tensorflow"] and not after["tensorflow"]
    # The page was drawn while the subprocess was still importing TensorFlow.
    assert first["probe"] == hardware_check.CHECKING
    assert "Checking for GPUs…" in first["captions"]
    assert "unavailable: still checking for GPUs" in first["modes"]
    # Run waits only for the workers' start-up (the queue line says so), never for the GPU check: once they are
    # ready it is on, whether or not the check has answered by then.
    warming = "Queue — empty: TensorFlow is starting in the workers that will train; Run in a few seconds."
    assert first["run_disabled"] is False or warming in first["captions"]
    assert warm["run_disabled"] is False, f"CPU training must not wait for the GPU check ({warm['probe']})"
    assert after["probe"] == hardware_check.READY
    assert "unavailable: no GPU found on this machine" in after["modes"]
    # The real check (the default command, a fresh interpreter) described this machine: its cores, TensorFlow, GPUs.
    host = after["host"]
    assert host["cpu_cores"] >= 1 and host["tensorflow"] and after["gpus"] == host["gpus"]


def test_quick_demo_without_a_gpu_compares_plain_fit_and_the_fast_path_on_the_cpu(at, fashion_mnist):
    at.button(key="preset_Quick demo").click().run()
    assert at.session_state["model"] == "mlp" and at.session_state["epochs"] == PRESETS["Quick demo"]["epochs"]
    # No GPU here: the demo compares one change at a time, plain model.fit first (the baseline).
    assert at.session_state["mode"] == "fit:cpu"
    at.number_input(key="epochs").set_value(3)  # two steady epochs are enough here; the whole demo: the browser test's
    at.button(key="run").click().run()
    status = " ".join(m.value for m in at.markdown)
    series = ["CPU (plain fit)", "CPU (multi-step loop)", "CPU (multi-step loop, XLA)"]
    assert all(f"{name}: " in status for name in series)  # live: epochs or "next"
    train = settle(at)
    assert not at.exception
    assert not train.error
    epochs = at.session_state["epochs"]
    status = " ".join(m.value for m in train.markdown)
    assert all(f"{name}: done, {epochs} epochs" in status for name in series)
    assert "Queue — empty" in " ".join(c.value for c in at.caption)

    results = [get_runner().status(i).result for i in at.session_state["train"].ids]
    assert [(r.config["execution"], r.device["jit_compile"]) for r in results] == [
        ("keras-fit", False),
        ("multi-step-loop", False),
        ("multi-step-loop", True),
    ]  # each arm changes one thing
    assert all(r.status == "completed" and r.device["variables_on"] == "CPU:0" for r in results)

    # The race against the clock (the default x axis): training accuracy at every call, test at every epoch.
    # Then the roofline's charts (tests/test_roofline_app.py).
    (race_spec, race_rows), (time_spec, time_rows), *_ = chart_specs(train)
    race, secs = encoding(race_spec), encoding(time_spec)
    assert race["x"]["field"] == "seconds" and race["y"]["field"] == "accuracy"
    assert secs["x"]["field"] == "epoch" and secs["y"]["field"] == "seconds"
    assert race["color"]["scale"]["domain"] == series
    for name, result in zip(series, results, strict=True):
        mine = [r for r in race_rows if r["series"] == name]
        assert len([r for r in mine if r["split"] == "train"]) == sum(len(e.calls) for e in result.epochs) > epochs
        test = [r for r in mine if r["split"] == "test"]
        # An MLP on 30,000 Fashion-MNIST images: well above chance (10%) after one epoch.
        assert len(test) == epochs and min(r["accuracy"] for r in test) > 0.6
        times = [r["seconds"] for r in mine]  # in time order (calls record 4 decimals): a race
        assert all(b >= a - 1e-3 for a, b in zip(times, times[1:], strict=False)) and times[-1] > times[0]
        assert [r["warmup"] for r in time_rows if r["series"] == name] == [True] + [False] * (epochs - 1)
    # The per-epoch view is one click away.
    at.segmented_control(key="accuracy_x").set_value("epoch").run()
    (acc_spec, acc_rows), *_ = chart_specs(at)
    assert encoding(acc_spec)["x"]["field"] == "epoch" and len(acc_rows) == 3 * 2 * epochs

    # One column of numbers per run (a row per run wrapped its name over six lines at 1280x720), time to the default
    # target included; no number cut on a projector.
    target = compare.default_target(results)
    (table,) = [m.value for m in at.markdown if m.value.startswith("| | ")]
    header, _, *rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
    assert header == ["", *series]
    figures = {row[0]: row[1:] for row in rows}
    for i, result in enumerate(results):
        assert figures["Final test accuracy"][i] == f"{result.final_test_accuracy():.1%}"
        assert figures[f"Time to {target:.0%}"][i] == f"{compare.time_to_accuracy(result, target):.2f} s"
        assert figures["Steady epoch (mean of 2+)"][i] == f"{steady_epoch_seconds(result):.3f} s"
        assert figures["Variables on"][i] == "CPU:0" and figures["XLA (`jit_compile`)"][i] == ["off", "off", "on"][i]
        gflops, share = tables.achieved(result)
        # Achieved GFLOP/s is the model's FLOPs per sample times its speed, as a share of the measured peak (which a
        # run may pass when the peak was timed under more load: the roofline says so; tests/test_roofline.py).
        assert gflops > 0 and share > 0 and share == pytest.approx(gflops / result.measured.limits.peak_gflops)
    assert "MirroredStrategy" not in figures  # neither run used it
    # The headline: the first arm against the last, the ratio of steady samples/s with its spread and count; it is
    # the ratio of the steady epochs in the table (the same samples per epoch on both sides).
    found = compare.speedup(results[0], results[2])
    sentence = compare.speedup_sentence(results[0], results[2], series[0], series[2])
    assert f"#### {run_text.plain(sentence)}" in [m.value for m in at.markdown]
    assert "calls of the step loop after epoch 1" in sentence and series[0] in sentence and series[2] in sentence
    epochs_ratio = steady_epoch_seconds(results[0]) / steady_epoch_seconds(results[2])
    assert found.ratio == pytest.approx(epochs_ratio, rel=0.02)
    # What each change bought, each over the run before it, measured in this press.
    (steps,) = [m.value for m in at.markdown if m.value.startswith("| Run | Changed |")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in steps.splitlines()[2:]]
    assert [row[1] for row in cells] == ["—", "execution = multi-step-loop", "xla = on"]
    bought = [compare.speedup(a, b) for a, b in zip(results, results[1:], strict=False)]
    assert [row[3] for row in cells[1:]] == [compare.ratio_words(b) for b in bought]
    (measured,) = [c.value for c in at.caption if c.value.startswith("Measured: training samples per second")]
    # The calls' own seconds, not "about 0.2 s": the loop's here are a quarter of a short epoch's.
    loop = compare.measurements(results[2])
    assert f"{series[2]}: {len(loop):,} calls of {min(loop.seconds):.3f}-{max(loop.seconds):.3f} s" in measured

    # What the model learned: a strip of predictions per run (an MLP has no templates).
    assert [t.label for t in at.tabs][:3] == series
    strips = [r.epochs[-1].learned for r in results]
    assert [len(i.captions) for i in at.image] == [len(s.indices) for s in strips] and len(strips[0].indices) >= 10
    # Each caption is the predicted class; a wrong one is marked.
    for image, strip in zip(at.image, strips, strict=True):
        marked = [c.endswith("✗") for c in image.captions]
        assert marked == [p != t for t, p in zip(strip.labels, strip.predictions, strict=True)]
    assert sum("test images:" in c.value for c in at.caption) == 3

    downloads = [b.label for b in at.download_button]
    runs_files = [f"{name} · {fmt}" for name in series for fmt in ("JSON", "trace (TensorBoard)")]
    assert downloads == [*runs_files, "All epochs · CSV"]  # each run's file, and its profiler trace for TensorBoard
    # Show code: the venv's python, and one script per run, in its own execution mode.
    codes = [c.value for c in at.code]
    assert codes[0].startswith(snippet.python_command() + " -m core train") and len(codes) == 4
    assert "model.fit(" in codes[1] and "def train_steps(" in codes[2] and "JIT_COMPILE = True" in codes[3]
    devices = " ".join(m.value for m in page("Devices", at).markdown)
    assert "variables lived on CPU:0" in devices

    # The address names the runs: a reload (a new session at that address) draws the same result from the history.
    ids = at.session_state["train"].ids
    assert at.query_params["runs"] == ",".join(ids)
    reloaded = page("Train", address={"runs": ",".join(ids)})
    assert "train" not in reloaded.session_state or not reloaded.session_state["train"].ids
    said = " ".join(m.value for m in reloaded.markdown)
    assert "From the history" in said and f"CPU (multi-step loop, XLA): done, {epochs} epochs" in said
    assert f"#### {run_text.plain(sentence)}" in [
        m.value for m in reloaded.markdown
    ]  # the same headline, from the store
    assert [b.label for b in reloaded.download_button] == downloads


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
    assert "train" not in at.session_state or not at.session_state["train"].started_here
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


def test_a_number_streamlit_cannot_hold_is_named_in_its_refusal_not_the_zero_put_in_its_place(at):
    # A hand-made page sends any number; Streamlit puts the field's default (0) in place of one a browser cannot hold
    # (ui.train_settings.watch). AppTest sends a field's value as a double, so 2**53 + 1 arrives as 2**53
    # (tests/test_share_browser.py sends whole numbers exactly).
    for key, sent, kept in (
        ("epochs", 2**53 + 1, 10),
        ("learning_rate", math.nan, 0.1),
        ("learning_rate", math.inf, 0.1),
    ):
        with pytest.raises(ConfigError) as expected:
            TrainConfig(**{key: float(sent)})
        at.number_input(key=key).set_value(sent).run()
        assert [e.value for e in at.error] == [str(expected.value)] and " not 0" not in str(expected.value)
        assert at.button(key="run").disabled and at.session_state[key] == 0  # the field holds Streamlit's 0
        at.number_input(key=key).set_value(kept).run()
        assert not at.error and not at.button(key="run").disabled
    assert not at.exception


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
    at.session_state["train"] = Watch(ids, started_here=True)
    at.run()
    assert [e.value for e in at.error] == [run_text.plain(f"CPU:7: {failed.error}")]  # TFDASH_LOGICAL_CPUS: no italics
    assert failed.error.startswith("There is no cpu:7") and "\n" not in failed.error
    assert "CPU:7: failed" in " ".join(m.value for m in at.markdown)
    assert not at.exception


def run_one_softmax(at: AppTest):
    """Run the tutorial's softmax on a little synthetic data, on the CPU, from the Train view; its finished result."""
    for key, value in {
        "dataset": "synthetic",
        "model": "softmax",
        "train_subset": 300,
        "batch_size": 50,
        "epochs": 2,
        "mode": "cpu",
    }.items():
        at.session_state[key] = value
    settle(at.run().button(key="run").click().run())
    assert not at.exception
    (result,) = [get_runner().status(i).result for i in at.session_state["train"].ids]
    return result


def test_one_softmax_run_shows_its_templates_and_points_to_a_comparison_this_machine_can_make(at):
    result = run_one_softmax(at)
    learned = result.epochs[-1].learned
    # The ten weight templates, then the strip of predictions.
    templates, strip = at.image
    assert templates.captions == [f"class {i}" for i in range(10)]
    # Inline PNGs of the stored templates, pixel for pixel: no media file a slow browser could find gone.
    for url, template in zip(templates.value, learned.templates, strict=True):
        assert url.startswith("data:image/png;base64,")
        png = PILImage.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert np.array_equal(np.asarray(png), np.asarray(template, np.uint8).reshape(28, 28))
    assert all(url.startswith("data:image/png;base64,") for url in strip.value)
    assert len(strip.captions) == len(learned.indices)
    assert [c.endswith("✗") for c in strip.captions] == [
        p != t for t, p in zip(learned.labels, learned.predictions, strict=True)
    ]
    # No GPU here: the hint names a comparison this machine can run, never the disabled "CPU vs GPU".
    (hint,) = [c.value for c in at.caption if c.value.startswith("To compare")]
    fit_cpu = next(m.label for m in device_modes.modes(hardware_check.result()) if m.key == "fit:cpu")
    assert f"“{fit_cpu}”" in hint and "CPU vs GPU" not in hint
    assert "import that file in the History view" in hint


def test_devices_view_never_reads_as_a_gpu_when_there_is_none(at):
    # No view is titled "CPU vs GPU" on a machine with none: each says what it shows (History's: ui.compared).
    titles = {view: [h.value for h in page(view, at).subheader] for view in ("History", "Scaling", "Devices")}
    # The title first; Scaling adds "Finished sweeps" where this worker's history holds another test's sweep.
    assert {view: shown[0] for view, shown in titles.items()} == {v: compared.VIEW_TITLES[v.lower()] for v in titles}
    assert not any("GPU" in t for shown in titles.values() for t in shown)
    devices = page("Devices", at)
    text = " ".join(m.value for m in devices.markdown)
    hw = hardware_check.result()
    assert "Built with" not in text
    if not hw.gpus:
        assert "**GPU** | none found" in text
        if hw.host.get("cuda_build"):  # a CUDA build on a machine without a GPU: the case that read as one
            assert f"could use an NVIDIA GPU (built for CUDA {hw.host['cuda_build']}" in text
        assert any("import that file in the History view" in c.value for c in devices.caption)
    # The peak and bandwidth, from the same check, before any run: the median of five tries and their spread.
    cpu = hw.host["limits"]["/CPU:0"]
    assert f"**Limits, CPU:0** | peak {cpu['peak_gflops']:,.0f} GFLOP/s (float32 matmul, median of 5 tries" in text
    assert not devices.exception
