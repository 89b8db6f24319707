"""The dashboard: pick a device and settings, then watch CPU and GPU train live, side by side.

Tabs: Train (this page's runs, live), History (past and imported runs, overlaid), Scaling
(throughput against batch size: where a GPU overtakes the CPU), Devices. No TensorFlow here:
training and sweeps run on core.runner's worker thread, the hardware check in a subprocess
(core.probe), so the first render never waits for TensorFlow to import.
"""

from __future__ import annotations

import re
import time

import streamlit as st

from core import probe, snippet
from core.config import (
    DEFAULT_BATCH_SIZES,
    MAX_BATCH,
    MAX_EPOCHS,
    MAX_HIDDEN,
    MAX_LEARNING_RATE,
    MAX_REPEATS,
    MAX_SEED,
    MAX_STEPS,
    MAX_SYNTHETIC,
    PRESET_MODES,
    PRESETS,
    ConfigError,
    SweepConfig,
    TrainConfig,
)
from core.engine import data as datasets
from core.engine import models
from core.engine.devices import GPU_ADVICE
from core.history.importer import MAX_FILE_BYTES, ImportOutcome, RunFileError
from core.history.rows import HistoryRow, result_csv
from core.history.store import Store, StoreError, get_store
from core.results import RunResult, SweepPoint, SweepResult, crossover_sentence, points_frame, speedup_sentence
from core.runner import JobStatus
from ui import charts, live, views
from ui.resources import get_runner

POLL_S = 0.3  # how often a running page looks at the runner: Stop is honoured within about this

SETTINGS = tuple(PRESETS["The tutorial"])
# The widget shows "the whole set" as 0; TrainConfig says None.
WIDGET_PRESETS = {name: {**p, "train_subset": p["train_subset"] or 0} for name, p in PRESETS.items()}
OPTIMIZER_LABELS = {"sgd": "SGD (plain gradient descent)", "adam": "Adam"}
EXECUTION_LABELS = {"fast": "Fast: many steps per tf.function call", "keras-default": "As plain model.fit"}


# -- state and actions (callbacks run before the script, so a click is seen by this run) -------
def settings() -> dict:
    """The sidebar's values as TrainConfig fields (device and execution come from the mode)."""
    values = {k: st.session_state[k] for k in SETTINGS}
    return {**values, "train_subset": values["train_subset"] or None}


def apply_preset(name: str) -> None:
    st.session_state.update(WIDGET_PRESETS[name])
    with_gpu, without = PRESET_MODES[name]
    st.session_state.mode = with_gpu if probe.result().gpus else without


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
    for key, value in {**WIDGET_PRESETS["The tutorial"], "mode": "cpu"}.items():
        st.session_state.setdefault(key, value)
    sb = st.sidebar
    sb.header("Settings")
    sb.caption("For the Train tab; the Scaling tab has its own.")
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
    done = sum(s.done for s in runs)
    total = sum(s.total or 0 for s in runs) or 1
    current = get_runner().current()
    # live.status_line words another session's training; a sweep ahead in the queue is named here.
    sweeping = current is not None and not isinstance(current.config, TrainConfig)
    line = live.status_line(runs, labels, None if sweeping else current, st.session_state.get("stopping", False))
    if sweeping and any(s.state == "queued" for s in runs):
        line += f"  ·  waiting for the {views.describe_job(current)}"
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
        charts_ui(frame, max(s.total or 1 for s in runs))
    with slots["summary"].container():
        summary_ui(results, labels, (0, 1) if len(results) == 2 else None)
        if len(results) == 1 and results[0].epochs:
            st.caption("To compare, pick CPU vs GPU, or Fast vs plain model.fit, under Device.")


def charts_ui(frame, epochs_total: int) -> None:
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
        if not result.epochs:
            continue
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
    if pair and all(results[i].epochs for i in pair):
        (base, other) = pair
        st.markdown(f"### {views.plain(speedup_sentence(results[base], results[other], labels[base], labels[other]))}")


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
        if s.state not in live.ACTIVE and s.result and s.items
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


# -- the History tab ------------------------------------------------------------------------
def import_file(store: Store, name: str, data: bytes) -> tuple[str, str, ImportOutcome | None]:
    """Import a run or sweep file's bytes: (level success/info/error, one sentence, the outcome or None)."""
    try:
        outcome = store.import_result_bytes(data)
    except (RunFileError, StoreError) as err:
        return "error", f"{name}: {err}", None
    return ("success" if outcome.added else "info"), outcome.describe(), outcome


def on_upload() -> None:
    ss = st.session_state
    file = ss.get("history_upload")
    if file is None:  # the file was removed from the uploader
        ss.import_message = None
        return
    level, sentence, outcome = import_file(get_store(), file.name, file.getvalue())
    if outcome is not None and outcome.kind == "sweep":
        ss.sweep_pick = outcome.run_id
        sentence += " It is in the Scaling tab."
    elif outcome is not None:  # a run: picked for the charts, next to whatever was picked already
        ss.history_pick = list(dict.fromkeys([*ss.get("history_pick", []), outcome.run_id]))
    ss.import_message = (level, sentence)


def ask_delete(ids: list[str]) -> None:
    st.session_state.confirm_delete = ids


def delete_runs(ids: list[str]) -> None:
    ss, store = st.session_state, get_store()
    gone = [i for i in ids if store.delete(i)]
    ss.history_pick = [i for i in ss.get("history_pick", []) if i not in gone]
    ss.confirm_delete = None
    ss.history_note = f"Deleted {len(gone)} run{'' if len(gone) == 1 else 's'}; every other run is kept."


def upload_ui() -> None:
    """The importer: a JSON file from `python -m core train --json` (or `sweep --json`) on another machine."""
    limit_mb = MAX_FILE_BYTES / 1e6
    st.file_uploader(
        f"Import a run or a sweep from another machine: the JSON file `python -m core train --json` "
        f"or `sweep --json` writes (at most {limit_mb:g} MB)",
        type=["json"],
        key="history_upload",
        on_change=on_upload,
        # Streamlit's own limit, in its megabytes, is at least the importer's: files between the two
        # reach the importer, which refuses them with its one sentence.
        max_upload_size=max(1, round(limit_mb + 0.5)),
    )
    message = st.session_state.get("import_message")
    if message:
        {"success": st.success, "info": st.info, "error": st.error}[message[0]](views.plain(message[1]))


def pick_ui(rows: list[HistoryRow]) -> list[HistoryRow]:
    """The runs picked to overlay, in the order picked."""
    by_id = {r.run_id: r for r in rows}
    ss = st.session_state
    ss.history_pick = [i for i in ss.get("history_pick", []) if i in by_id]  # deleted elsewhere: dropped
    picked = st.multiselect(
        "Runs to overlay (pick two to compare them)",
        list(by_id),
        key="history_pick",
        format_func=lambda i: views.pick_label(by_id[i]),
        placeholder="Choose runs from the table",
        on_change=ask_delete,  # a new pick withdraws a pending "delete?" question
        args=(None,),
    )
    return [by_id[i] for i in picked]


def compare_ui(store: Store, picked: list[HistoryRow]) -> None:
    """The picked runs on the Train tab's two charts, with their summary and, for two, the speedup."""
    results = {r.run_id: r for r in store.load([p.run_id for p in picked])}
    picked = [p for p in picked if p.run_id in results]
    runs, labels = [results[p.run_id] for p in picked], views.run_labels(picked)
    if not runs:  # deleted from another page since the table was read
        return
    charts_ui(charts.epochs_frame([r.to_frame() for r in runs], labels), max(r.config["epochs"] for r in runs))
    pair = views.slower_first(runs)
    summary_ui(runs, labels, pair)
    if pair and (differences := views.config_differences(runs[pair[0]], runs[pair[1]])):
        st.caption(
            f"Besides the device, these runs differ in {'; '.join(differences)}: the ratio compares whole epochs, "
            "not the devices alone."
        )


def history_actions_ui(store: Store, picked: list[HistoryRow]) -> None:
    """Download the picked runs (JSON as the CLI writes it, and CSV), or delete them after a confirmation."""
    ids = [p.run_id for p in picked]
    n = len(ids)
    if n == 1:
        name, data, mime = f"run-{ids[0]}.json", store.export_json(ids[0]), "application/json"
    else:  # one file per run, each importable again
        name, mime = "runs.zip", "application/zip"
        data = views.zip_files({f"run-{i}.json": store.export_json(i) for i in ids})
    csv = views.join_csv([store.export_csv(i) for i in ids])
    what = "run" if n == 1 else f"{n} runs"
    left, middle, right = st.columns(3)
    left.download_button(f"Download {what} · JSON", data, name, mime, key="history_json", on_click="ignore")
    middle.download_button(
        f"Download {what} · CSV", csv, "epochs.csv", "text/csv", key="history_csv", on_click="ignore"
    )
    deletable = [p.run_id for p in picked if p.status != "running"]
    right.button(
        f"Delete {what}…", key="history_delete", on_click=ask_delete, args=(deletable,), disabled=not deletable
    )
    if n > len(deletable):
        st.caption("A run in progress cannot be deleted; stop it first.")
    confirm = [i for i in st.session_state.get("confirm_delete") or [] if i in deletable]
    if confirm:
        st.warning(
            f"Delete {len(confirm)} run{'' if len(confirm) == 1 else 's'} and their epochs from the history? "
            "This cannot be undone; every other run is kept."
        )
        yes, no, _ = st.columns([1, 1, 4])
        yes.button("Yes, delete", key="history_delete_yes", type="primary", on_click=delete_runs, args=(confirm,))
        no.button("Cancel", key="history_delete_no", on_click=ask_delete, args=(None,))


def history_ui() -> None:
    """Past runs of this machine and imported ones: a table, overlays, downloads, deletion, import."""
    store = get_store()
    upload_ui()
    if note := st.session_state.pop("history_note", None):
        st.success(note)
    rows = store.history()
    if not rows:
        st.info("No runs yet. Runs from the Train tab appear here as they start; so do imported ones.")
        return
    st.dataframe(
        views.history_frame(rows),
        hide_index=True,
        key="history_table",
        column_config={
            "Test accuracy": st.column_config.NumberColumn(format="percent"),
            "Median epoch (s)": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    picked = pick_ui(rows)
    if not picked:
        st.caption("Pick runs above to overlay their curves, compare their speed, download or delete them.")
        return
    compare_ui(store, picked)
    history_actions_ui(store, picked)


# -- the Scaling tab ------------------------------------------------------------------------
SWEEP_BATCHES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
SWEEP_DEFAULTS = {"sw_model": "softmax", "sw_hidden": 128, "sw_batches": list(DEFAULT_BATCH_SIZES), "sw_repeats": 3,
                  "sw_steps": 0}  # fmt: skip
WHY_IDLE = """
**Why a tiny model leaves a GPU idle.** Every training step launches a handful of kernels (a matrix
multiply, the softmax, the gradients, the update) and waits for Python and TensorFlow to hand them
over. A launch costs microseconds however little work it carries. Softmax regression at batch 16 is
half a million floating-point operations per step (31,380 per sample, forward and backward): a GPU
that does trillions per second finishes that in well under a microsecond, then waits for the next
launch. So throughput is set by overhead, not arithmetic, and the share of peak is tiny. Bigger
batches and wider models (raise the MLP's hidden units) put more arithmetic behind each launch,
which is why throughput climbs with batch size until the device is busy, and why the GPU overtakes
the CPU only past some batch size.

**Why fusing steps helps.** This sweep, like the Train tab's fast execution, runs many optimizer
steps in one `tf.function` call, as a loop inside the graph, so the Python call, argument handling
and the device sync happen once per call instead of once per step. Plain `model.fit` pays them on
every step; on a tiny model that overhead is most of the time.
"""


def sweep_values() -> dict:
    """The Scaling tab's settings as SweepConfig fields."""
    ss = st.session_state
    devices = [d for d in views.sweep_devices(probe.result()) if ss.get(device_key(d))]
    return {
        "devices": devices,
        "model": ss.sw_model,
        "hidden_units": ss.sw_hidden,
        "batch_sizes": sorted(ss.sw_batches),
        "repeats": ss.sw_repeats,
        "steps": ss.sw_steps or None,
    }


def device_key(device: str) -> str:
    return "sw_dev_" + device.replace(":", "_")


def start_sweep() -> None:
    ss = st.session_state
    try:
        # The GPU guard is in plan_sweep, not only in the disabled checkbox: a stale page cannot sweep a GPU.
        config = views.plan_sweep(sweep_values(), probe.result())
    except ConfigError as err:
        ss.sweep_error = str(err)
        return
    ss.sweep = get_runner().submit(config)
    ss.sweep_error, ss.sweep_stopping, ss.sweep_adopted = None, False, False


def stop_sweep() -> None:
    if sweep_id := st.session_state.get("sweep"):
        get_runner().cancel(sweep_id)
        st.session_state.sweep_stopping = True


def my_sweep() -> JobStatus | None:
    """This page's sweep; a fresh page shows a sweep in progress (from any page) until it starts its own."""
    runner, ss = get_runner(), st.session_state
    if not ss.get("sweep"):
        active = [j for j in runner.jobs() if isinstance(j.config, SweepConfig)]
        if active:
            ss.sweep, ss.sweep_adopted = active[0].run_id, True
    return runner.status(ss.sweep) if ss.get("sweep") else None


def sweep_settings_ui(hw: probe.Probe) -> None:
    """Model, width, devices (a GPU only where there is one), batch sizes, repeats and steps."""
    ss = st.session_state
    for key, value in SWEEP_DEFAULTS.items():
        ss.setdefault(key, value)
    offered = ss.setdefault("sw_offered", set())
    model, width, repeats, steps = st.columns(4)
    model.selectbox("Model", list(models.REGISTRY), key="sw_model", format_func=lambda n: models.REGISTRY[n].label)
    width.number_input(
        "MLP hidden units (model width)",
        1,
        MAX_HIDDEN,
        step=64,
        key="sw_hidden",
        disabled=ss.sw_model != "mlp",
        help="Only the MLP has a hidden layer to widen; a wider layer is more arithmetic per sample.",
    )
    repeats.number_input(
        "Repeats per point", 1, MAX_REPEATS, step=1, key="sw_repeats", help="The spread is over these."
    )
    steps.number_input(
        "Timed steps per repeat (0 = auto)", 0, MAX_STEPS, step=10, key="sw_steps", help="Auto: about 0.5 s of work."
    )
    st.multiselect("Batch sizes", SWEEP_BATCHES, key="sw_batches")
    columns = st.columns(4)
    for col, (device, mode) in zip(columns * 4, views.sweep_devices(hw).items(), strict=False):
        key, reason = device_key(device), probe.unavailable(mode, hw)
        if reason:
            ss[key] = False
            offered.discard(device)
        elif device not in offered:  # checked once when it first becomes available; the user decides after
            ss[key] = True
            offered.add(device)
        col.checkbox(mode.label, key=key, disabled=bool(reason))
        if reason:
            col.caption(f"unavailable: {reason}")


def sweep_controls_ui(sweep: JobStatus | None) -> dict:
    """Run sweep and Stop, and why Run is off; returns the live slots."""
    ss = st.session_state
    active = sweep is not None and sweep.state in live.ACTIVE
    problem = None
    try:
        views.plan_sweep(sweep_values(), probe.result())
    except ConfigError as err:
        problem = str(err)
        st.error(problem)
    if ss.get("sweep_error"):
        st.error(ss.pop("sweep_error"))
    run_col, stop_col, status_col = st.columns([1, 1, 5], vertical_alignment="center")
    own_active = active and not ss.get("sweep_adopted")
    run_col.button(
        "Run sweep", key="sw_run", type="primary", on_click=start_sweep, disabled=own_active or bool(problem),
        width="stretch",
    )  # fmt: skip
    stop_col.button("Stop", key="sw_stop", on_click=stop_sweep, disabled=not active, width="stretch")
    return {"status": status_col.empty(), "progress": st.empty(), "live": st.empty()}


def sweep_live_view(slots: dict, sweep: JobStatus | None) -> None:
    """The sweep in progress: its status, progress and (once a point is measured) its results."""
    if sweep is None:
        slots["status"].markdown("Pick devices and batch sizes, then press **Run sweep**.")
        return
    line = views.sweep_status_line(sweep, st.session_state.get("sweep_stopping", False))
    if st.session_state.get("sweep_adopted") and sweep.state in live.ACTIVE:
        line = f"Already running on this server: {line}"
    slots["status"].markdown(f"**{line}**")
    total = sweep.total or 1
    slots["progress"].progress(min(sweep.done / total, 1.0), text=f"{sweep.done} of {total} points")
    if sweep.state not in live.ACTIVE:
        slots["live"].empty()  # finished: the results below show it from the history
        return
    result = sweep.result if isinstance(sweep.result, SweepResult) else None
    with slots["live"].container():
        if not sweep.items:
            st.info("The chart appears when the first point is measured (each starts with tracing and a warm-up).")
        else:
            sweep_result_ui(list(sweep.items), result.model if result else {}, result.devices if result else {})


def sweep_result_ui(points: list[SweepPoint], model: dict, devices: dict) -> None:
    """A sweep's chart, crossover in words, per-point table and why the numbers are what they are."""
    measured = [p for p in points if p.samples_per_second]
    if measured:
        st.altair_chart(charts.throughput_chart(points_frame(points)), width="stretch")
    crossover = crossover_sentence(points)
    if len({p.device for p in points}) > 1:
        st.markdown(f"### {views.plain(crossover)}")
    else:
        st.caption(crossover)
    for p in points:
        if p.error:
            st.warning(views.plain(f"{p.label} at batch {p.batch_size}: {p.error}"))
    st.dataframe(
        views.sweep_table(points),
        hide_index=True,
        column_config={
            "Samples/s": st.column_config.NumberColumn(format="localized", help="Median over the repeats."),
            "Min": st.column_config.NumberColumn(format="localized", help="The slowest repeat, samples/s."),
            "Max": st.column_config.NumberColumn(format="localized", help="The fastest repeat, samples/s."),
            "ms per step": st.column_config.NumberColumn(format="%.3f"),
            "GFLOP/s": st.column_config.NumberColumn(format="%.2f", help="Achieved training GFLOP/s."),
            "Share of peak": st.column_config.NumberColumn(
                format="percent", help="Achieved GFLOP/s ÷ the device's peak from a large matrix multiply."
            ),
        },
    )
    for sentence in views.idle_sentences(points, model.get("train_flops_per_sample"), devices):
        st.markdown(f"- {views.plain(sentence)}")
    with st.expander("Why a small model leaves a GPU idle, and why fusing steps helps"):
        st.markdown(WHY_IDLE)


def stored_sweeps_ui(store: Store, sweep: JobStatus | None) -> None:
    """Finished sweeps (this machine's and imported ones): pick one to see it and download it."""
    ss = st.session_state
    rows = {r.run_id: r for r in store.sweeps()}
    own = sweep.result if sweep is not None and isinstance(sweep.result, SweepResult) else None
    if sweep is not None and sweep.state not in live.ACTIVE and ss.get("sweep_shown") != sweep.run_id:
        ss.sweep_pick, ss.sweep_shown = sweep.run_id, sweep.run_id  # a sweep that just finished is shown first
    unstored = (
        {own.run_id: own} if own is not None and own.run_id not in rows and sweep.state not in live.ACTIVE else {}
    )
    options = [*unstored, *rows]
    if not options:
        st.info("No finished sweeps yet. Run one above, or import a sweep file in the History tab.")
        return
    if ss.get("sweep_pick") not in options:
        ss.sweep_pick = options[0]
    st.subheader("Finished sweeps")
    picked = st.selectbox(
        "Sweep",
        options,
        key="sweep_pick",
        format_func=lambda i: views.sweep_pick_label(rows[i]) if i in rows else "this page's last sweep",
    )
    try:
        result = unstored.get(picked) or store.get_sweep(picked)
    except StoreError as err:  # a stored sweep this version cannot read: said, not raised
        st.error(views.plain(str(err)))
        return
    if result is None:
        return
    if result.error:
        st.error(views.plain(result.error))
    sweep_result_ui(result.points, result.model, result.devices)
    left, right, _ = st.columns([1, 1, 2])
    name = f"sweep-{picked}"
    left.download_button("Download sweep · JSON", result.to_json(), f"{name}.json", "application/json",
                         key="sweep_json", on_click="ignore")  # fmt: skip
    right.download_button("Download sweep · CSV", result_csv(result), f"{name}.csv", "text/csv", key="sweep_csv",
                          on_click="ignore")  # fmt: skip


def scaling_ui(hw: probe.Probe, sweep: JobStatus | None) -> dict:
    """Where the GPU wins: a batch-size sweep through the runner, live, then the stored sweeps; returns live slots."""
    st.markdown(
        "Throughput (training samples per second, after a warm-up) for each device and batch size, on synthetic "
        "data already on the device, so the input pipeline is not what is measured."
    )
    sweep_settings_ui(hw)
    slots = sweep_controls_ui(sweep)
    stored_sweeps_ui(get_store(), sweep)
    return slots


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


def active_ids(runs: list[JobStatus], sweep: JobStatus | None) -> tuple[set[str], set[str]]:
    """Ids of this page's runs, and of its sweep, that are queued or running."""
    training = {s.run_id for s in runs if s.state in live.ACTIVE}
    sweeping = {sweep.run_id} if sweep is not None and sweep.state in live.ACTIVE else set()
    return training, sweeping


def watch(slots: dict, sweep_slots: dict, queue_slot, began: tuple[set[str], set[str]]) -> None:
    """Redraw after every epoch or sweep point while this page's runs or sweep are active.

    began: what was active when the page was drawn. When all its runs, or its sweep, finish, rerun the
    whole page, so History and the finished sweeps include them (the rerun watches what is still active).
    """
    ss, last = st.session_state, {}
    while True:
        runner = get_runner()
        runs, sweep, jobs, current = my_runs(), my_sweep(), runner.jobs(), runner.current()
        active = active_ids(runs, sweep)
        done = any(then and not now for then, now in zip(began, active, strict=True))
        # Runs this page started, not ones it only watches (adopted from another page).
        mine = ({s.run_id for s in runs} if not ss.get("adopted") else set()) | (
            {sweep.run_id} if sweep and not ss.get("sweep_adopted") else set()
        )
        parts = {
            "train": (
                ([(s.state, s.done) for s in runs], current and (current.run_id, current.done),
                 live.download_line(runs)),
                live_view, (slots, runs),
            ),
            "sweep": (sweep and (sweep.state, sweep.done, sweep.position), sweep_live_view, (sweep_slots, sweep)),
            "queue": ([(j.run_id, j.state, j.position, j.done) for j in jobs], queue_view, (queue_slot, jobs, mine)),
        }  # fmt: skip
        for name, (key, draw, args) in parts.items():
            if name not in last or last[name] != key:
                draw(*args)
                last[name] = key
        if done or not any(active):
            break
        time.sleep(POLL_S)
    if done:
        st.rerun()


def queue_view(slot, jobs: list[JobStatus], mine: set[str]) -> None:
    """One line above the tabs: what the runner is doing now and what waits, by position."""
    slot.caption(views.queue_line(jobs, mine))


def main() -> None:
    st.set_page_config(page_title="TensorFlow: CPU vs GPU", page_icon="⏱️", layout="wide")
    probe.start()
    hw = probe.result()
    try:
        get_runner()  # opens the run history: an unusable file is one sentence, not a traceback
    except StoreError as err:
        st.error(str(err))
        return
    mode = settings_ui(hw)
    runs, sweep = my_runs(), my_sweep()
    if runs and not live.is_active(runs):
        st.session_state.stopping = False
    if sweep and sweep.state not in live.ACTIVE:
        st.session_state.sweep_stopping = False
    labels = charts.series_labels([s.config for s in runs])
    st.title("TensorFlow training: CPU vs GPU, live")
    st.caption(
        "The same model, data and seed in each run. Epoch 1 includes tracing and compilation; "
        "speed is the median of epochs 2 and later."
    )
    queue_slot = st.empty()
    train_tab, history_tab, scaling_tab, devices_tab = st.tabs(["Train", "History", "Scaling", "Devices"])
    with train_tab:
        configs, slots = controls_ui(mode, hw, runs)
        downloads_ui(runs, labels)
        code_ui(configs)
    with history_tab:
        history_ui()
    with scaling_tab:
        sweep_slots = scaling_ui(hw, sweep)
    with devices_tab:
        devices_ui(hw, runs, labels)
    if hw.state == probe.CHECKING:
        probe_watch()
    watch(slots, sweep_slots, queue_slot, active_ids(runs, sweep))


main()
