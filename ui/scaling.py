"""The Scaling view: where a GPU overtakes the CPU. A batch-size sweep through the runner, live, then stored sweeps.

Run by st.navigation as a page (the guard at the bottom).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core.engine import models
from core.history.rows import result_csv
from core.history.store import Store, StoreError
from core.language.i18n import N_, _
from core.machine import hardware_check
from core.results import SweepPoint, SweepResult, points_frame
from core.results.crossover import crossover_sentence
from core.runner import JobStatus
from core.settings import device_modes
from core.settings.config import DEFAULT_BATCH_SIZES, MAX_HIDDEN, MAX_REPEATS, MAX_STEPS, ConfigError
from ui import charts, layout, live, roofline, run_text, sweep_plan, tables, view_state, watcher
from ui.resources import get_store, hardware

KIND = "sweep"
PROMPT = N_("Pick devices and batch sizes, then press **Run sweep**.")
SWEEP_BATCHES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
DEFAULTS = {
    "sw_model": "softmax",
    "sw_hidden": 128,
    "sw_batches": list(DEFAULT_BATCH_SIZES),
    "sw_repeats": 3,
    "sw_steps": 0,
    "sweep_pick": None,
}
WHY_IDLE = N_("""
**Why a tiny model leaves a GPU idle.** Every training step launches a handful of kernels (a matrix
multiply, the softmax, the gradients, the update) and waits for Python and TensorFlow to hand them
over. A launch costs microseconds however little work it carries. Softmax regression at batch 16 is
half a million floating-point operations per step (31,380 per sample, forward and backward): a GPU
that does trillions per second finishes that in well under a microsecond, then waits for the next
launch. So throughput is set by overhead, not arithmetic, and the share of peak is tiny. Bigger
batches and wider models (raise the MLP's hidden units) put more arithmetic behind each launch,
which is why throughput climbs with batch size until the device is busy, and why the GPU overtakes
the CPU only past some batch size.

**Why fusing steps helps.** This sweep, like the Train view's multi-step loop, runs many optimizer
steps in one `tf.function` call, as a loop inside the graph, so the Python call, argument handling
and the device sync happen once per call instead of once per step. Plain `model.fit` pays them on
every step; Keras' own `steps_per_execution` pays them once per that many steps. On a tiny model
that overhead is most of the time.
""")


def device_key(device: str) -> str:
    return "sw_dev_" + device.replace(":", "_")


def sweep_values() -> dict:
    """The view's settings as SweepConfig fields."""
    ss = st.session_state
    return {
        "devices": [d for d in sweep_plan.sweep_devices(hardware()) if ss.get(device_key(d))],
        "model": ss.sw_model,
        "hidden_units": ss.sw_hidden,
        "batch_sizes": sorted(ss.sw_batches),
        "repeats": ss.sw_repeats,
        "steps": ss.sw_steps or None,
    }


def start_sweep() -> None:
    try:
        # The GPU guard is in plan_sweep, not only in the disabled checkbox: a stale page cannot sweep a GPU.
        config = sweep_plan.plan_sweep(sweep_values(), hardware())
    except ConfigError as err:
        st.session_state.sweep_error = str(err)
        return
    st.session_state.sweep_error = None
    watcher.start(KIND, [config])


def settings_ui(hw: hardware_check.Hardware) -> None:
    """Model, width, devices (a GPU only where there is one), batch sizes, repeats and steps."""
    ss = st.session_state
    devices = sweep_plan.sweep_devices(hw)
    keys = {**DEFAULTS, **{device_key(d): False for d in devices}}
    view_state.restore(keys)
    offered = ss.setdefault("sw_offered", set())
    model, width, repeats, steps = st.columns(4)
    model.selectbox(
        _("Model"), list(models.REGISTRY), key="sw_model", format_func=lambda n: _(models.REGISTRY[n].label)
    )
    width.number_input(
        _("MLP hidden units (model width)"),
        None,
        None,
        step=64,
        key="sw_hidden",
        disabled=ss.sw_model != "mlp",
        help=_(
            "1 to {high:,}. Only the MLP has a hidden layer to widen; a wider layer is more arithmetic per sample."
        ).format(high=MAX_HIDDEN),
    )
    repeats.number_input(
        _("Repeats per point"),
        None,
        None,
        step=1,
        key="sw_repeats",
        help=_("1 to {high}; the spread is over these.").format(high=MAX_REPEATS),
    )
    steps.number_input(
        _("Timed steps per repeat (0 = auto)"),
        None,
        None,
        step=10,
        key="sw_steps",
        help=_("0 to {high:,}. Auto: about 0.5 s of work.").format(high=MAX_STEPS),
    )
    st.multiselect(_("Batch sizes"), SWEEP_BATCHES, key="sw_batches")
    columns = st.columns(4)
    for col, (device, mode) in zip(columns * 4, devices.items(), strict=False):
        key, reason = device_key(device), device_modes.unavailable(mode, hw)
        if reason:
            ss[key] = False
            offered.discard(device)
        elif device not in offered:  # checked once when it first becomes available; the user decides after
            ss[key] = True
            offered.add(device)
        col.checkbox(mode.label, key=key, disabled=bool(reason))
        if reason:
            col.caption(_("unavailable: {reason}").format(reason=reason))
    view_state.remember(k for k in keys if k != "sweep_pick")


def problem_ui(hw: hardware_check.Hardware) -> str | None:
    """Why Run sweep is off (a bad setting, a device missing), said above the buttons; None if it can run."""
    problem = None
    try:
        sweep_plan.plan_sweep(sweep_values(), hw)
    except ConfigError as err:
        problem = str(err)
        st.error(problem)
    if st.session_state.get("sweep_error"):
        st.error(st.session_state.pop("sweep_error"))
    return problem


def running_ui(sweep: tuple[JobStatus, ...]) -> None:
    """The points of a sweep in progress (redrawn as each lands); a finished one is among the stored sweeps."""
    if not sweep or sweep[0].state not in live.ACTIVE:
        return
    job = sweep[0]
    if not job.items:
        st.info(_("The chart appears when the first point is measured (each starts with tracing and a warm-up)."))
        return
    result = job.result if isinstance(job.result, SweepResult) else None
    result_ui(list(job.items), result.model if result else {}, result.devices if result else {})


def result_ui(points: list[SweepPoint], model: dict, devices: dict) -> None:
    """A sweep's chart, crossover in words, per-point table and why the numbers are what they are."""
    if any(p.samples_per_second for p in points):
        charts.show(st, charts.throughput_chart(points_frame(points)))
    crossover = crossover_sentence(points)
    if len({p.device for p in points}) > 1:
        st.markdown(f"### {run_text.plain(crossover)}")
    else:
        st.caption(run_text.plain(crossover))
    for p in points:
        if p.error:
            said = _("{device} at batch {batch}: {problem}").format(device=p.label, batch=p.batch_size, problem=p.error)
            st.warning(run_text.plain(said))
    number = st.column_config.NumberColumn
    st.dataframe(
        tables.sweep_table(points).rename(columns=_),  # the headings in the page's language
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={
            _("Samples/s"): number(format="localized", help=_("Median over the repeats.")),
            _("Min"): number(format="localized", help=_("The slowest repeat, samples/s.")),
            _("Max"): number(format="localized", help=_("The fastest repeat, samples/s.")),
            _("ms per step"): number(format="%.3f"),
            "GFLOP/s": number(format="%.2f", help=_("Achieved training GFLOP/s.")),
            _("Share of peak"): number(
                format="percent", help=_("Achieved GFLOP/s ÷ the device's peak from a large matrix multiply.")
            ),
        },
    )
    for sentence in run_text.idle_sentences(points, model.get("train_flops_per_sample"), devices):
        st.markdown(f"- {run_text.plain(sentence)}")
    roofline.sweep_ui(points, model, devices)  # each point on its device's roofline
    with st.expander(_("Why a small model leaves a GPU idle, and why fusing steps helps")):
        st.markdown(_(WHY_IDLE))


def stored_ui(store: Store, sweep: tuple[JobStatus, ...]) -> None:
    """Finished sweeps (this machine's and imported ones): pick one to see it and download it."""
    ss = st.session_state
    rows = {r.run_id: r for r in store.sweeps()}
    job = sweep[0] if sweep else None
    finished = job is not None and job.state not in live.ACTIVE
    if finished and ss.get("sweep_shown") != job.run_id:
        ss.sweep_pick, ss.sweep_shown = job.run_id, job.run_id  # a sweep that just finished is shown first
    own = job.result if finished and isinstance(job.result, SweepResult) else None
    unstored = {own.run_id: own} if own is not None and own.run_id not in rows else {}
    options = [*unstored, *rows]
    if not options:
        st.info(_("No finished sweeps yet. Run one above, or import a sweep file in the History view."))
        return
    if ss.get("sweep_pick") not in options:
        ss.sweep_pick = options[0]
    st.subheader(_("Finished sweeps"))
    picked = st.selectbox(
        _("Sweep"),
        options,
        key="sweep_pick",
        format_func=lambda i: run_text.sweep_pick_label(rows[i]) if i in rows else _("this page's last sweep"),
    )
    view_state.remember(["sweep_pick"])
    try:
        result = unstored.get(picked) or store.get_sweep(picked)
    except StoreError as err:  # a stored sweep this version cannot read: said, not raised
        st.error(run_text.plain(str(err)))
        return
    if result is None:
        return
    if result.error:
        st.error(run_text.plain(result.error))
    result_ui(result.points, result.model, result.devices)
    left, right, _rest = st.columns([1, 1, 2])
    name = f"sweep-{picked}"
    # Deferred (callables): made when clicked, so no media file a rerun can replace before the browser fetched it.
    left.download_button(
        _("Download sweep · JSON"),
        result.to_json,
        f"{name}.json",
        "application/json",
        key="sweep_json",
        on_click="ignore",
    )
    right.download_button(
        _("Download sweep · CSV"),
        partial(result_csv, result),
        f"{name}.csv",
        "text/csv",
        key="sweep_csv",
        on_click="ignore",
    )


def main() -> None:
    layout.style()
    hw = hardware()
    st.markdown(
        _(
            "Throughput (training samples per second, after a warm-up) for each device and batch size, on synthetic "
            "data already on the device, so the input pipeline is not what is measured."
        )
    )
    settings_ui(hw)
    snap = watcher.jobs_now([KIND])
    ready = problem_ui(hw) is None
    status_col = watcher.controls_ui(KIND, snap, _("Run sweep"), ("sw_run", "sw_stop"), start_sweep, ready)
    watcher.live_ui(snap, partial(watcher.status_view, KIND, lambda jobs: [_("Sweep")], _(PROMPT), status_col))
    running_ui(snap.shown[KIND])
    stored_ui(get_store(), snap.shown[KIND])


if __name__ == "__main__":  # st.navigation runs this file as the Scaling page
    main()
