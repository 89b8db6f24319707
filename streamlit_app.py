"""The dashboard: pick a device and settings, then watch CPU and GPU train live, side by side.

No TensorFlow here: training runs on core.runner's worker thread, the hardware check in a
subprocess (core.probe), so the first render never waits for TensorFlow to import.
"""

from __future__ import annotations

import re
import time

import streamlit as st

from core import charts, live, models, probe, snippet
from core import data as datasets
from core.config import (
    MAX_BATCH,
    MAX_EPOCHS,
    MAX_HIDDEN,
    MAX_LEARNING_RATE,
    MAX_SEED,
    MAX_SYNTHETIC,
    ConfigError,
    TrainConfig,
)
from core.devices import GPU_ADVICE
from core.results import RunResult, speedup_sentence
from core.runner import JobStatus, get_runner

POLL_S = 0.3  # how often a running page looks at the runner: Stop is honoured within about this

PRESETS = {
    "The tutorial": {
        "dataset": "fashion_mnist", "model": "softmax", "optimizer": "sgd", "learning_rate": 0.1,
        "batch_size": 100, "epochs": 10, "seed": 0, "execution": "fast", "train_subset": 0, "hidden_units": 128,
    },
    # About 6 s on a 2-core CPU, TensorFlow's start-up included (the promise is under 30 s).
    "Quick demo": {
        "dataset": "fashion_mnist", "model": "mlp", "optimizer": "adam", "learning_rate": 0.001,
        "batch_size": 100, "epochs": 3, "seed": 0, "execution": "fast", "train_subset": 20_000, "hidden_units": 128,
    },
}  # fmt: skip
SETTINGS = tuple(PRESETS["The tutorial"])
OPTIMIZER_LABELS = {"sgd": "SGD (plain gradient descent)", "adam": "Adam"}
EXECUTION_LABELS = {"fast": "Fast: many steps per tf.function call", "keras-default": "As plain model.fit"}


# -- state and actions (callbacks run before the script, so a click is seen by this run) -------
def settings() -> dict:
    """The sidebar's values as TrainConfig fields (device and execution come from the mode)."""
    values = {k: st.session_state[k] for k in SETTINGS}
    return {**values, "train_subset": values["train_subset"] or None}


def apply_preset(name: str) -> None:
    st.session_state.update(PRESETS[name])
    st.session_state.mode = "cpu-vs-gpu" if probe.result().gpus else "cpu"


def start_runs() -> None:
    ss = st.session_state
    try:
        # The GPU guard lives in plan(), not only in the widget: a stale page cannot start a GPU run.
        configs = probe.plan(settings(), ss.mode, probe.result())
    except ConfigError as err:
        ss.start_error = str(err)
        return
    ss.runs = live.submit_group(get_runner(), configs)
    ss.start_error, ss.stopping, ss.adopted = None, False, False


def stop_runs() -> None:
    for run_id in st.session_state.get("runs", []):
        get_runner().cancel(run_id)
    st.session_state.stopping = True


def my_runs() -> list[JobStatus]:
    """This session's runs; a fresh page (e.g. reloaded) shows the training in progress until it starts its own."""
    runner, ss = get_runner(), st.session_state
    if not ss.get("runs") and (group := live.active_group(runner)):
        ss.runs, ss.adopted = group, True
    return [s for s in (runner.status(i) for i in ss.get("runs", [])) if s is not None]


# -- the sidebar ----------------------------------------------------------------------------
def settings_ui(hw: probe.Probe) -> probe.Mode:
    """Presets, dataset, model, device mode and numbers; returns the chosen device mode."""
    for key, value in {**PRESETS["The tutorial"], "mode": "cpu"}.items():
        st.session_state.setdefault(key, value)
    sb = st.sidebar
    sb.header("Settings")
    left, right = sb.columns(2)
    for col, name in zip((left, right), PRESETS, strict=True):
        col.button(name, key=f"preset_{name}", on_click=apply_preset, args=(name,), width="stretch")

    avail = {name: datasets.availability(name) for name in datasets.REGISTRY}
    sb.radio(
        "Dataset",
        list(datasets.REGISTRY),
        key="dataset",
        format_func=lambda n: datasets.REGISTRY[n].label,
        captions=[a.reason for a in avail.values()],
    )
    sb.selectbox("Model", list(models.REGISTRY), key="model", format_func=lambda n: f"{models.REGISTRY[n].label}")
    sb.caption(models.REGISTRY[st.session_state.model].description)

    modes = probe.modes(hw)
    by_key = {m.key: m for m in modes}
    if st.session_state.mode not in by_key:
        st.session_state.mode = "cpu"
    sb.radio(
        "Device",
        list(by_key),
        key="mode",
        format_func=lambda k: by_key[k].label,
        captions=[f"unavailable: {r}" if (r := probe.unavailable(m, hw)) else "" for m in modes],
    )
    notes = {probe.CHECKING: "Checking for GPUs…", probe.FAILED: hw.message}
    if hw.state in notes:
        sb.caption(notes[hw.state])
    elif not hw.gpus:
        sb.caption(f"No GPU found. {GPU_ADVICE}")

    sb.number_input("Epochs", 1, MAX_EPOCHS, step=1, key="epochs")
    sb.number_input("Batch size", 1, MAX_BATCH, step=10, key="batch_size")
    sb.number_input("Learning rate", 0.0001, MAX_LEARNING_RATE, step=0.001, format="%.4f", key="learning_rate")
    sb.selectbox("Optimizer", list(OPTIMIZER_LABELS), key="optimizer", format_func=OPTIMIZER_LABELS.get)
    mode = by_key[st.session_state.mode]
    with sb.expander("Advanced"):
        st.number_input("Seed", 0, MAX_SEED, step=1, key="seed")
        both = {r.get("execution") for r in mode.runs} >= set(EXECUTION_LABELS)
        st.radio("Execution", list(EXECUTION_LABELS), key="execution", format_func=EXECUTION_LABELS.get, disabled=both)
        if both:
            st.caption("This device mode runs both, side by side.")
        st.number_input("Training samples (0 = the whole set)", 0, MAX_SYNTHETIC, step=1000, key="train_subset")
        st.number_input("Hidden units (MLP)", 1, MAX_HIDDEN, step=16, key="hidden_units")
    return mode


# -- the Train tab --------------------------------------------------------------------------
def controls_ui(mode: probe.Mode, hw: probe.Probe, runs: list[JobStatus]) -> tuple[list[TrainConfig] | None, dict]:
    """Run and Stop, and why Run is off; returns the configs Run would submit (None if it cannot) and the live slots."""
    busy = live.is_active(runs)
    # A page watching someone else's run may still queue its own: it is then told what it waits for.
    own_busy = busy and not st.session_state.get("adopted")
    configs, problem = None, probe.unavailable(mode, hw)
    if problem:
        st.warning(f"{mode.label} cannot run here: {problem}. {GPU_ADVICE}")
    else:
        try:
            configs = probe.plan(settings(), mode.key, hw)
        except ConfigError as err:
            st.error(str(err))
    name = st.session_state.dataset
    if configs and not datasets.availability(name).available:
        ready = ", ".join(datasets.REGISTRY[n].label for n in datasets.REGISTRY if datasets.availability(n).available)
        reason = datasets.availability(name).reason
        st.info(
            f"{datasets.REGISTRY[name].label} is not on this machine yet ({reason}). "
            f"Run will try to download it and show its progress; available offline: {ready}."
        )
    if st.session_state.get("start_error"):
        st.error(st.session_state.pop("start_error"))  # shown once: the next click decides afresh
    run_col, stop_col, status_col = st.columns([1, 1, 5], vertical_alignment="center")
    run_col.button(
        "Run", key="run", type="primary", on_click=start_runs, disabled=own_busy or not configs, width="stretch"
    )
    stop_col.button("Stop", key="stop", on_click=stop_runs, disabled=not busy, width="stretch")
    slots = {"status": status_col.empty()}
    return configs, slots | {name: st.empty() for name in ("progress", "errors", "charts", "summary")}


def live_view(slots: dict, runs: list[JobStatus]) -> None:
    """Everything that changes while training; no widgets, so it can be redrawn every epoch."""
    labels = charts.series_labels([s.config for s in runs])
    if not runs:
        slots["status"].markdown("Pick a preset or settings in the sidebar, then press **Run**.")
        return
    results = [live.snapshot(s) for s in runs]
    done = sum(s.epochs_done for s in runs)
    total = sum(s.epochs_total or 0 for s in runs) or 1
    line = live.status_line(runs, labels, get_runner().current(), st.session_state.get("stopping", False))
    if st.session_state.get("adopted"):
        line = f"Already running on this server: {line}"
    slots["status"].markdown(f"**{line}**")
    progress = live.download_line(runs) or (f"{done} of {total} epochs", done / total)
    slots["progress"].progress(min(progress[1], 1.0), text=progress[0])
    with slots["errors"].container():
        for s, label in zip(runs, labels, strict=True):
            if s.state == "failed":
                st.error(f"{label}: {s.error or 'the run failed.'}")
    frame = charts.epochs_frame([r.to_frame() for r in results], labels)
    with slots["charts"].container():
        if len(frame) == 0:
            st.info("The charts appear when epoch 1 finishes (it includes tracing and compilation).")
        else:
            left, right = st.columns(2)
            left.altair_chart(charts.accuracy_chart(frame, max(s.epochs_total or 1 for s in runs)), width="stretch")
            right.altair_chart(charts.epoch_time_chart(frame, max(s.epochs_total or 1 for s in runs)), width="stretch")
    with slots["summary"].container():
        summary_ui(results, labels)


def summary_ui(results: list[RunResult], labels: list[str]) -> None:
    """Final accuracy, median steady-state epoch, warm-up cost and samples/s per run; the speedup."""
    for result, label in zip(results, labels, strict=True):
        if not result.epochs:
            continue
        head, *cols = st.columns([1.3, 1, 1, 1, 1])
        head.markdown(f"### {label}")
        head.caption(f"variables on {result.device.get('variables_on', '?')}")
        median, warm, rate = result.median_epoch_seconds(), result.warmup_seconds(), result.median_samples_per_second()
        cols[0].metric("Final test accuracy", f"{result.final_test_accuracy():.1%}")
        cols[1].metric("Median epoch (2+)", f"{median:.3f} s" if median else "—", help="Steady state: epochs 2..N.")
        cols[2].metric("Warm-up cost", f"{warm:+.2f} s" if warm is not None else "—", help="Epoch 1 minus the median.")
        cols[3].metric("Samples / s", f"{rate:,.0f}" if rate else "—", help="Median of epochs 2..N, training only.")
    if len(results) == 2 and all(r.epochs for r in results):
        st.markdown(f"### {speedup_sentence(results[0], results[1], labels[0], labels[1])}")
    elif len(results) == 1 and results[0].epochs:
        st.caption("To compare, pick CPU vs GPU, or Fast vs plain model.fit, under Device.")


def code_ui(configs: list[TrainConfig] | None) -> None:
    with st.expander("Show code: reproduce these settings"):
        if not configs:
            st.write("Fix the settings first; the code follows them.")
            return
        labels = charts.series_labels(configs)
        st.markdown("**Command line** (from the repository root):")
        st.code(
            "\n".join(snippet.cli_command(c, f"{slug(lb)}.json") for c, lb in zip(configs, labels, strict=True)),
            language="bash",
            wrap_lines=True,
        )
        st.markdown("**Plain TensorFlow / Keras**, the same data, model, optimizer and device:")
        for code in dict.fromkeys(snippet.keras_code(c) for c in configs):
            st.code(code, language="python")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def downloads_ui(runs: list[JobStatus], labels: list[str]) -> None:
    finished = [
        (s.result, lb)
        for s, lb in zip(runs, labels, strict=True)
        if s.state not in live.ACTIVE and s.result and s.epochs
    ]
    if not finished:
        return
    cols = st.columns(len(finished) + 2)
    for col, (result, label) in zip(cols, finished, strict=False):
        name = f"{slug(label)}-{result.run_id}.json"
        col.download_button(f"{label} run · JSON", result.to_json(), name, "application/json", on_click="ignore")
    table = charts.epochs_frame([r.to_frame() for r, _ in finished], [lb for _, lb in finished])
    csv = table.to_csv(index=False)
    cols[len(finished)].download_button("All epochs · CSV", csv, "epochs.csv", "text/csv", on_click="ignore")


# -- the Devices tab ------------------------------------------------------------------------
def devices_ui(hw: probe.Probe, runs: list[JobStatus], labels: list[str]) -> None:
    if hw.state == probe.CHECKING:
        st.info("Checking for GPUs… (a subprocess imports TensorFlow; the page does not wait for it)")
        return
    if hw.state == probe.FAILED:
        st.warning(f"{hw.message} Treating this machine as CPU only.")
        return
    rows = probe.host_rows(hw)
    for s, label in zip(runs, labels, strict=True):
        if s.result and s.result.device.get("variables_on"):
            rows.append((f"Last run, {label}", f"variables lived on {s.result.device['variables_on']}"))
    st.markdown("| | This machine |\n|---|---|\n" + "\n".join(f"| **{k}** | {v} |" for k, v in rows))


# -- the page -------------------------------------------------------------------------------
@st.fragment(run_every=1.0)
def probe_watch() -> None:
    """Until the hardware check answers, look once a second; then redraw the page with its answer."""
    if probe.result().state != probe.CHECKING:
        st.rerun(scope="app")


def watch(slots: dict) -> None:
    """Redraw after every epoch until the runs have finished, then rerun once for the final page."""
    polled = False
    last = None
    while True:
        runs, current = my_runs(), get_runner().current()
        key = (
            [(s.state, s.epochs_done) for s in runs],
            current and (current.run_id, current.epochs_done),
            live.download_line(runs),
        )
        if key != last:
            live_view(slots, runs)
            last = key
        if not live.is_active(runs):
            break
        polled = True
        time.sleep(POLL_S)
    if polled:
        st.rerun()


def main() -> None:
    st.set_page_config(page_title="TensorFlow: CPU vs GPU", page_icon="⏱️", layout="wide")
    probe.start()
    hw = probe.result()
    mode = settings_ui(hw)
    runs = my_runs()
    if runs and not live.is_active(runs):
        st.session_state.stopping = False
    labels = charts.series_labels([s.config for s in runs])
    st.title("TensorFlow training: CPU vs GPU, live")
    st.caption(
        "The same model, data and seed on each device. Epoch 1 includes tracing and compilation; "
        "speed is the median of epochs 2 and later."
    )
    train_tab, devices_tab = st.tabs(["Train", "Devices"])
    with train_tab:
        configs, slots = controls_ui(mode, hw, runs)
        downloads_ui(runs, labels)
        code_ui(configs)
    with devices_tab:
        devices_ui(hw, runs, labels)
    if hw.state == probe.CHECKING:
        probe_watch()
    watch(slots)


main()
