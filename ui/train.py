"""The Train view: settings in the sidebar, Run and Stop, then this page's runs, live, side by side.

Run by st.navigation as a page (the guard at the bottom); importable for its helpers.
"""

from __future__ import annotations

import re
from functools import partial

import streamlit as st

from core.cluster import messages as cluster_messages
from core.engine import data as datasets
from core.engine.devices import GPU_ADVICE
from core.export import snippet
from core.history import profiles, recorder
from core.language import i18n
from core.language.i18n import N_, _
from core.machine import backends, hardware_check
from core.results import RunResult
from core.results.states import State
from core.runner import JobStatus, end_messages
from core.settings import device_modes
from core.settings.config import ConfigError, TrainConfig
from ui import (
    charts,
    compare_settings,
    compared,
    comparison,
    draw_once,
    layout,
    links,
    live,
    result_link,
    roofline,
    run_text,
    train_settings,
    watcher,
)
from ui.labels import series_labels
from ui.resources import get_store, hardware

KIND = "train"
# The sentences a job's end is told in, on the runner's threads (English): read back in the page's language.
ENDED_SAID = (*end_messages.ALL, *cluster_messages.ALL)
PROMPT = N_("Pick a preset or settings in the sidebar, then press **Run**.")


def labels(runs) -> list[str]:
    return series_labels([s.config for s in runs])


def start_runs() -> None:
    ss = st.session_state
    try:
        # The GPU guard lives in plan(), not only in the widget: a stale page cannot start a GPU run.
        configs = device_modes.plan(train_settings.values(), ss.mode, hardware(), compare_settings.comparison())
    except ConfigError as err:
        ss.start_error = str(err)
        return
    ss.start_error = None
    watcher.start(KIND, configs)
    if (watch := ss.get(KIND)) is not None and watch.started_here:
        result_link.remember(watch.ids)  # a reload, or the address sent to someone, shows these runs


def plan_ui(mode: device_modes.Mode, hw: hardware_check.Hardware) -> list[TrainConfig] | None:
    """The configs Run would submit, or None; says why not (a device missing, a bad setting) above the buttons."""
    if said := links.problem():  # a prepared link's bad value, until that setting is changed
        st.error(said)
        return None
    # Along the device axis the values name the devices; the Device choice's own device does not run.
    if st.session_state.get("axis") != "device" and (problem := device_modes.unavailable(mode, hw)):
        st.warning(
            _("{mode} cannot run here: {problem}. {advice}").format(
                mode=mode.label, problem=problem, advice=_(GPU_ADVICE)
            )
        )
        return None
    try:
        configs = device_modes.plan(train_settings.values(), mode.key, hw, compare_settings.comparison())
    except ConfigError as err:
        st.error(str(err))
        return None
    for device, precision in dict.fromkeys((c.device, c.precision) for c in configs):
        if note := backends.slow_note(device, precision, hw.host):
            st.caption(
                _("{precision} on {device}: {note}.").format(precision=precision, device=device.upper(), note=note)
            )
    name = configs[0].dataset
    if not datasets.availability(name).available:
        ready = ", ".join(
            _(datasets.REGISTRY[n].label) for n in datasets.REGISTRY if datasets.availability(n).available
        )
        st.info(
            _(
                "{dataset} is not on this machine yet ({reason}). Run will try to download it and show its progress; "
                "available offline: {ready}."
            ).format(dataset=_(datasets.REGISTRY[name].label), reason=datasets.availability(name).reason, ready=ready)
        )
    return configs


def results_ui(runs: tuple[JobStatus, ...], hw: hardware_check.Hardware, watched: bool = False) -> None:
    """Errors, headline, charts, numbers and what was learned, of the page's runs so far (redrawn per epoch).

    watched: another page's runs, whose settings are said beside them (this page's sidebar may differ)."""
    if not runs:
        return
    if watched:
        compared.watched_ui([s.config.to_dict() for s in runs])
    names = labels(runs)
    for s, label in zip(runs, names, strict=True):
        # Interrupted: its worker or Ray node died; the sentence says when.
        if s.state in (State.FAILED, State.INTERRUPTED):
            said = i18n.again(s.error, ENDED_SAID) if s.error else _("the run failed.")
            st.error(run_text.plain(_("{label}: {words}").format(label=label, words=said)))
        if s.note:  # the history refused a write (locked, full): the run goes on, and says what is not stored
            said = i18n.again(s.note, recorder.SAID)  # said on the runner's thread, in English
            st.warning(run_text.plain(_("{label}: {words}").format(label=label, words=said)))
    key, shown = draw_once.frame(runs)  # every page watching draws the same frame, drawn once (ui/draw_once.py)
    results = [live.snapshot(s) for s in shown]
    comparison.compare_ui(results, names, by_value=True, in_progress=[s.in_progress for s in shown], key=key)
    draw_once.once((key, tuple(names)), roofline.runs_ui, results, names)  # why: the runs on their devices' rooflines
    if len(results) == 1 and results[0].epochs:
        st.caption(compare_hint(hw))


def compare_hint(hw: hardware_check.Hardware) -> str:
    """Where to go for a comparison: the device modes this machine can run, and, without a GPU, History's import."""
    ready = [m.label for m in device_modes.modes(hw) if len(m.runs) > 1 and not device_modes.unavailable(m, hw)]
    pick = _(" or ").join(f"“{r}”" for r in ready)
    said = _("To compare, pick {modes} under Device.").format(modes=pick) if ready else _("To compare.")
    if hw.gpus:
        return said
    server = _(
        "No GPU here: train on a GPU server with `python -m core train --device gpu --json run.json` and import that "
        "file in the History view, to overlay it on a run of this machine."
    )
    return f"{said} {server}"


def finished_runs(runs: tuple[JobStatus, ...]) -> list[tuple[RunResult, str]]:
    """(result, label) of each finished run with an epoch, for the downloads."""
    named = zip(runs, labels(runs), strict=True)
    return [(s.result, lb) for s, lb in named if s.state not in live.ACTIVE and s.result and s.items]


def downloads_ui(finished: list[tuple[RunResult, str]]) -> None:
    """Each finished run's JSON file (importable elsewhere) and every epoch as one CSV."""
    if not finished:
        return
    cols = st.columns(len(finished) + 1)
    traced = get_store().traced(r.run_id for r, _ in finished if r.run_id)
    for col, (result, label) in zip(cols, finished, strict=False):
        name = f"{slug(label)}-{result.run_id}.json"
        # Deferred (a callable): made when clicked, so no media file a rerun can replace before the browser fetched it.
        col.download_button(
            f"{label} · JSON", result.to_json, name, "application/json", on_click="ignore", width="stretch"
        )
        # The profiler's window of its step, as a log directory TensorBoard's profile plugin opens.
        if result.run_id in traced:
            zipped = partial(_trace_zip, result.run_id, slug(label), result.host.get("hostname") or "host")
            col.download_button(
                _("{label} · trace (TensorBoard)").format(label=label),
                zipped,
                f"{slug(label)}-{result.run_id}-trace.zip",
                "application/zip",
                on_click="ignore",
                width="stretch",
            )
    table = charts.epochs_frame([r.to_frame() for r, _ in finished], [lb for _, lb in finished])
    cols[len(finished)].download_button(
        _("All epochs · CSV"),
        partial(table.to_csv, index=False),
        "epochs.csv",
        "text/csv",
        on_click="ignore",
        width="stretch",
    )


def _trace_zip(run_id: str, name: str, host: str) -> bytes:
    """A run's kept trace as a .zip of a TensorBoard log directory, read when its button is clicked."""
    return profiles.profile_zip({name: (host, get_store().trace(run_id) or b"")})


def stored_ui(results: list[RunResult], names: list[str], hw: hardware_check.Hardware) -> None:
    """The runs the address names, from the history: what the page drew of them when they ended."""
    key = draw_once.stored_key(results)
    comparison.compare_ui(results, names, by_value=True, key=key)
    draw_once.once((key, tuple(names)), roofline.runs_ui, results, names)
    if len(results) == 1:
        st.caption(compare_hint(hw))


def status_ui(status_col, linked: str, snap: watcher.JobsNow) -> None:
    """The status line: the page's runs', else the address' runs from the history (linked), else the prompt."""
    if linked and not snap.shown[KIND]:
        status_col.markdown(f"**{run_text.plain(linked)}**")
        return
    watcher.status_view(KIND, labels, _(PROMPT), status_col, snap)


def code_ui(configs: list[TrainConfig] | None, runs: tuple[JobStatus, ...]) -> None:
    """The command and one plain-Keras script per run, with a finished run's own steps_per_execution."""
    with st.expander(_("Show code: reproduce these settings")):
        if not configs:
            st.write(_("Fix the settings first; the code follows them."))
            return
        names = series_labels(configs)
        recorded = {s.config: s.result.device.get("steps_per_execution") for s in runs if s.result}
        st.markdown(
            _("**Command line**, from the repository root (`{python}` is the venv's python):").format(
                python=snippet.python_command()
            )
        )
        host = hardware().host  # XLA said as it resolves on this machine's devices
        st.code(
            "\n".join(snippet.cli_command(c, f"{slug(lb)}.json", host) for c, lb in zip(configs, names, strict=True)),
            language="bash",
            wrap_lines=True,
        )
        st.markdown(_("**Plain TensorFlow / Keras**, one script per run: the same data, model, batches and device:"))
        for tab, config in zip(st.tabs(names), configs, strict=True):
            tab.code(snippet.keras_code(config, recorded.get(config)), language="python", wrap_lines=True)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def main() -> None:
    layout.style()
    hw = hardware()
    mode = train_settings.settings_ui(hw)
    snap = watcher.jobs_now([KIND])
    said = st.container()  # what is compared, above the plan's warnings
    configs = plan_ui(mode, hw)
    watch, shown = snap.watches[KIND], snap.shown[KIND]
    linked = result_link.linked()  # kept in the address across view changes
    stored = [] if shown else result_link.stored(linked)  # a reload: the address' runs, finished
    names = result_link.labels(stored)
    # The title and the sentence follow the runs on screen (a watched run's own settings), else what Run would do.
    about = [s.config.to_dict() for s in shown] or [r.config for r in stored] or [c.to_dict() for c in configs or ()]
    compared.title_ui(compared.title(about))
    said.markdown(compared.sentence(about, hw))  # always there, so nothing moves when the check answers
    if st.session_state.get("start_error"):
        st.error(st.session_state.pop("start_error"))  # shown once: the next click decides afresh
    status_col = watcher.controls_ui(KIND, snap, _("Run"), ("run", "stop"), start_runs, bool(configs))
    line = result_link.status_line(stored, names) if stored else ""
    watcher.live_ui(snap, partial(status_ui, status_col, line))
    if shown:
        results_ui(shown, hw, watched=watch is not None and not watch.started_here)
    elif stored:
        stored_ui(stored, names, hw)
    else:
        result_link.pointer_ui()  # where the last comparison is
    downloads_ui(finished_runs(shown) if shown else list(zip(stored, names, strict=True)))
    code_ui(configs, snap.shown[KIND])


if __name__ == "__main__":  # st.navigation runs this file as the Train page
    main()
