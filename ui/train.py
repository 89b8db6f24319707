"""The Train view: settings in the sidebar, Run and Stop, then this page's runs, live, side by side.

Run by st.navigation as a page (the guard at the bottom); importable for its helpers.
"""

from __future__ import annotations

import re
from functools import partial

import streamlit as st

from core import probe, snippet
from core.config import ConfigError, TrainConfig
from core.engine import data as datasets
from core.engine.devices import GPU_ADVICE
from core.runner import JobStatus
from ui import charts, live, runs_view, train_settings, watcher
from ui.resources import hardware

KIND = "train"


def start_runs() -> None:
    ss = st.session_state
    try:
        # The GPU guard lives in plan(), not only in the widget: a stale page cannot start a GPU run.
        configs = probe.plan(train_settings.values(), ss.mode, hardware())
    except ConfigError as err:
        ss.start_error = str(err)
        return
    ss.start_error = None
    watcher.start(KIND, configs)


def plan_ui(mode: probe.Mode, hw: probe.Probe) -> list[TrainConfig] | None:
    """The configs Run would submit, or None; says why not (a device missing, a bad setting) above the buttons."""
    if problem := probe.unavailable(mode, hw):
        st.warning(f"{mode.label} cannot run here: {problem}. {GPU_ADVICE}")
        return None
    try:
        configs = probe.plan(train_settings.values(), mode.key, hw)
    except ConfigError as err:
        st.error(str(err))
        return None
    name = configs[0].dataset
    if not datasets.availability(name).available:
        ready = ", ".join(datasets.REGISTRY[n].label for n in datasets.REGISTRY if datasets.availability(n).available)
        st.info(
            f"{datasets.REGISTRY[name].label} is not on this machine yet ({datasets.availability(name).reason}). "
            f"Run will try to download it and show its progress; available offline: {ready}."
        )
    return configs


def controls_ui(configs: list[TrainConfig] | None, watch: watcher.Watch | None, runs: tuple[JobStatus, ...]):
    """Run and Stop; returns the column the live status line goes in."""
    if st.session_state.get("start_error"):
        st.error(st.session_state.pop("start_error"))  # shown once: the next click decides afresh
    # Only this page's own runs hold its Run back; watching another page's, it may still queue its own.
    own_active = watch is not None and watch.own and live.is_active(runs)
    run_col, stop_col, status_col = st.columns([1, 1, 5], vertical_alignment="center")
    run_col.button("Run", key="run", type="primary", on_click=start_runs, disabled=own_active or not configs,
                   width="stretch")  # fmt: skip
    stop_col.button("Stop", key="stop", on_click=watcher.stop, args=(KIND,), disabled=not own_active, width="stretch")
    return status_col


def status_view(status_col, snap: watcher.Snapshot) -> None:
    """The status line and progress bar, from one snapshot: the live fragment redraws them every tick."""
    runs, watch = snap.shown[KIND], snap.watches[KIND]
    if not runs:
        status_col.markdown("Pick a preset or settings in the sidebar, then press **Run**.")
        return
    line = live.status_line(runs, charts.series_labels([s.config for s in runs]), snap.current, watch.stopping)
    if not watch.own:
        line = f"{'Already running on this server' if live.is_active(runs) else 'From another page'}: {line}"
    status_col.markdown(f"**{line}**")
    text, fraction = live.download_line(runs) or live.progress_bar(runs)
    st.progress(fraction, text=text)


def results_ui(runs: tuple[JobStatus, ...]) -> None:
    """Errors, charts and metrics of the page's runs so far (redrawn when an epoch lands)."""
    if not runs:
        return
    labels = charts.series_labels([s.config for s in runs])
    for s, label in zip(runs, labels, strict=True):
        if s.state == "failed":
            st.error(f"{label}: {s.error or 'the run failed.'}")
    results = [live.snapshot(s) for s in runs]
    runs_view.compare_ui(results, labels, (0, 1) if len(results) == 2 else None)
    if len(results) == 1 and results[0].epochs:
        st.caption("To compare, pick CPU vs GPU, or an execution against plain model.fit, under Device.")


def downloads_ui(runs: tuple[JobStatus, ...]) -> None:
    """Each finished run's JSON file (importable elsewhere) and every epoch as one CSV."""
    labels = charts.series_labels([s.config for s in runs])
    finished = [(s.result, lb) for s, lb in zip(runs, labels, strict=True) if s.state not in live.ACTIVE
                and s.result and s.items]  # fmt: skip
    if not finished:
        return
    cols = st.columns(len(finished) + 2)
    for col, (result, label) in zip(cols, finished, strict=False):
        name = f"{slug(label)}-{result.run_id}.json"
        col.download_button(f"{label} run · JSON", result.to_json(), name, "application/json", on_click="ignore")
    table = charts.epochs_frame([r.to_frame() for r, _ in finished], [lb for _, lb in finished])
    csv = table.to_csv(index=False)
    cols[len(finished)].download_button("All epochs · CSV", csv, "epochs.csv", "text/csv", on_click="ignore")


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


def main() -> None:
    hw = hardware()
    mode = train_settings.settings_ui(hw)
    snap = watcher.take([KIND])
    configs = plan_ui(mode, hw)
    status_col = controls_ui(configs, snap.watches[KIND], snap.shown[KIND])
    watcher.live_ui(snap, partial(status_view, status_col))
    results_ui(snap.shown[KIND])
    downloads_ui(snap.shown[KIND])
    code_ui(configs)


if __name__ == "__main__":  # st.navigation runs this file as the Train page
    main()
