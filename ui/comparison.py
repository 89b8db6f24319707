"""Runs side by side, as Train and History show them: the speedup headline, the charts, a table of numbers, what
they learned.

Sized for a 1280x720 projector: the headline (its place kept while the runs train, so nothing moves when it
arrives) and the two charts come first, the charts as tall as the window leaves them (ui.layout); the
controls, what the headline measured, its terms in plain words and the per-run table follow; nothing is cut
(the table wraps its headings instead).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.analysis import changes, compare
from core.language.i18n import N_, _
from core.machine import busy as core_busy
from core.results import RunResult, steady_epoch_seconds
from core.results.states import State
from core.settings import axes
from ui import chart_aids, charts, compared, draw_once, layout, learned, ratios, run_text, tables

X_AXES = {"clock": N_("Training seconds (the race)"), "epoch": N_("Epoch")}
MEASURED = N_(
    "Measured: training samples per second over every epoch after epoch 1 (its samples over its training seconds), "
    "so it is the ratio of the steady epochs in the table below for the same work, whatever the batch sizes; the "
    "range is a 90% bootstrap interval over those epochs' calls ({calls}), from these runs only: how much a busy or "
    "shared machine moves it between presses is not in it (press Run again to see)."
)
# Beside the headline: what its range covers (asv and benchstat judge a difference over repeated presses).
COVERS = N_("The range covers this press's steady epochs and calls, not presses: another press may land outside it.")
BUSY_MARK = N_("Busy machine:")
CALLS = N_("{label}: {n:,} calls of {low:.3f}-{high:.3f} s")


def calls_words(results: list[RunResult], labels: list[str]) -> str:
    """'CPU (plain fit): 1,188 calls of 0.004-0.012 s; ...': each run's steady calls as the interval resamples them."""
    said = []
    for result, label in zip(results, labels, strict=True):
        if (calls := compare.measurements(result)) is not None and calls.unit == "call":
            said.append(_(CALLS).format(label=label, n=len(calls), low=min(calls.seconds), high=max(calls.seconds)))
        elif calls is not None:  # a file from before calls were recorded: its epochs are the pieces
            said.append(_("{label}: {n} steady epochs").format(label=label, n=len(calls)))
    return "; ".join(said)


MEASURED_HELP = N_(
    "Epoch 1 is left out: it includes tracing and compiling. Every second of a steady epoch counts, model.fit's "
    "set-up of each epoch (building its data pipeline) included, so the ratio matches the seconds-per-epoch chart. "
    "A comparison's runs take turns epoch by epoch, each timed alone, so drift slower than an epoch (a laptop "
    "heating up) slows both alike; faster noise can hit the two differently. A run stored before per-call points "
    "were recorded is resampled by its steady epochs."
)


def pair_of(results: list[RunResult]) -> tuple[int, int] | None:
    """(baseline, other) indexes of two runs, the slower baseline first, so the headline reads 'N× faster'; of a
    chain of changes (core.analysis.changes), its first and last run (the table under the charts shows each change)."""
    if not all(r.epochs for r in results):
        return None
    if changes.is_chain(results):
        return (0, len(results) - 1) if compare.speedup(results[0], results[-1]) else None
    return compare.slower_first(results) if len(results) == 2 else None


def controls_ui(results: list[RunResult]) -> tuple[str, float | None]:
    """The accuracy chart's x axis and the accuracy target for 'time to X%': (axis key, target or None)."""
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    axis = left.segmented_control(
        _("Accuracy against"), list(X_AXES), format_func=lambda k: _(X_AXES[k]), default="clock", key="accuracy_x"
    )
    default = compare.default_target(results)
    if default is None:
        return axis or "clock", None
    # A new default (more epochs, other runs) is a new widget, so the number follows the runs unless changed.
    percent = right.number_input(
        _("Time to test accuracy (%)"),
        min_value=1,
        max_value=100,
        value=round(default * 100),
        step=1,
        help=_(
            "Training seconds until a run's test accuracy first reaches this, epoch 1's compiling included; "
            "the default is the highest whole percent every run reached."
        ),
    )
    return axis or "clock", percent / 100


def smoothing_ui() -> float:
    """TensorBoard's smoothing of the training curves: 0 (raw) to 0.95."""
    return st.slider(
        _("Smoothing (training curves)"),
        0.0,
        0.95,
        chart_aids.SMOOTHING,
        0.05,
        key="smoothing",
        help=_(
            "An exponential moving average of the dashed training lines, as TensorBoard's; the test "
            "points are never smoothed."
        ),
    )


def charts_ui(
    results: list[RunResult],
    labels: list[str],
    axis: str,
    target: float | None,
    in_progress: Sequence | None = None,
    smoothing: float = 0.0,
) -> None:
    """Accuracy (against the clock or per epoch) and seconds per epoch, side by side, as tall as the window allows.

    in_progress: per run, its epoch still training (core.results.EpochInProgress) or None: the race's training
    line moves within a long epoch, epoch 1 included, from its first calls.
    """
    frame = charts.epochs_frame([r.to_frame() for r in results], labels)
    partial = list(in_progress or [None] * len(results))
    moving = axis == "clock" and any(p is not None and p.calls for p in partial)
    if len(frame) == 0 and not moving:
        if axis == "clock":
            st.info(
                _(
                    "The charts start with its first calls, seconds after Run "
                    "(epoch 1 includes tracing and compilation)."
                )
            )
        else:
            st.info(_("The charts start with epoch 1's end (epoch 1 includes tracing and compilation)."))
        return
    total = max((r.config.get("epochs") or len(r.epochs) for r in results), default=1)
    # Keyed, so a test (and a person's eye) can tell the two live charts from the roofline's below them.
    left, right = st.container(key="run_charts").columns(2)
    if axis == "clock":
        race = charts.race_frame([compare.race_points(r, p) for r, p in zip(results, partial, strict=True)], labels)
        charts.show(left, layout.fill(charts.race_chart(race, target, smoothing)))
    else:
        charts.show(left, layout.fill(charts.accuracy_chart(frame, total, smoothing)))
    if len(frame):
        charts.show(right, layout.fill(charts.epoch_time_chart(frame, total)))
    else:
        right.info(_("Seconds per epoch appear when epoch 1 finishes (it includes tracing and compilation)."))


# Axes whose runs' labels already name the values ("GPU:0 is 2.9× faster than CPU", "CPU (multi-step loop) ...").
LABELS_NAME = (None, "device", "execution")


WAITING = N_("The speedup appears once epoch 2 is done: epoch 1 (the warm-up) includes compiling, so it is left out.")


def headline_ui(results: list[RunResult], labels: list[str], pair: tuple[int, int] | None, by_value: bool) -> str:
    """The speedup with its spread and count (what it measures: MEASURED, under the charts); by_value: name the
    axis' values, not the runs. While two runs have no speedup yet, says when it comes. Returns the sentence."""
    if pair is None:
        compared_ = len(results) == 2 or changes.is_chain(results)
        if compared_ and any(r.status in (State.QUEUED, State.RUNNING) for r in results):  # live runs, not stored ones
            st.markdown(f"#### :gray[{_(WAITING)}]")
            st.caption(_(COVERS))  # the line the said headline has under it: nothing moves when it comes
        elif len(results) == 2 and all(r.epochs for r in results):
            st.caption(_(compare.NEEDS))
        return ""
    base, other = pair
    configs = [r.config for r in results]
    names, where = labels, ""
    if by_value and axes.axis_of(configs) not in LABELS_NAME:
        # Along one axis the sentence names its values: "mixed_bfloat16 is 1.4× faster than float32 on GPU:0 (...)".
        names, where = axes.value_names(configs) or (labels, "")
    sentence = compare.speedup_sentence(results[base], results[other], names[base] + where, names[other])
    st.markdown(f"#### {run_text.plain(sentence)}")
    busy = core_busy.busy_sentence(results)  # measured: the rest of the machine's CPU time during the steady epochs
    st.caption(_(COVERS) if busy is None else f":orange[**{_(BUSY_MARK)}**] {run_text.plain(busy)}")
    return sentence


def xla_words(result: RunResult) -> str:
    """'on' or 'off': the jit_compile the run used, as recorded (the table's dash for a run that did not record it)."""
    jit = result.device.get("jit_compile")
    if jit is None:
        return tables.MISSING
    said = _("on") if jit else _("off")
    return _("{state} (auto)").format(state=said) if result.config.get("xla", "auto") == "auto" else said


def mirrored(result: RunResult) -> str:
    """'2 replicas: global batch 200 (100 x 2)' for a gpu:all or cpu:all run, else the table's dash."""
    replicas = result.device.get("replicas") or 1
    if replicas < 2:
        return tables.MISSING
    batch = result.config.get("batch_size")
    said = _("{replicas} replicas: global batch {total} ({batch} x {replicas})")
    return said.format(replicas=replicas, total=batch * replicas, batch=batch)


STEADY = N_("Steady epoch (mean of 2+)")


def _column(result: RunResult, target: float | None) -> dict[str, str]:
    """One run's figures, by the table's row names."""
    epoch, rate, warm = steady_epoch_seconds(result), compare.throughput(result), compare.warmup_cost(result)
    gflops, share = tables.achieved(result)
    column = {_("Final test accuracy"): f"{result.final_test_accuracy():.1%}"}
    if target is not None:
        reached = compare.time_to_accuracy(result, target)
        column[_("Time to {target:.0%}").format(target=target)] = (
            f"{reached:.2f} s" if reached is not None else _("not reached")
        )
    return column | {
        _(STEADY): f"{epoch:.3f} s" if epoch else tables.MISSING,
        _("Warm-up cost"): f"{warm:+.2f} s" if warm is not None else tables.MISSING,
        _("Samples / s"): f"{rate:,.0f}" if rate else tables.MISSING,
        "GFLOP/s": f"{gflops:,.1f}" if gflops else tables.MISSING,
        _("Share of peak"): tables.share_words(share) if share else tables.MISSING,
        _("Variables on"): result.device.get("variables_on") or "?",
        _("XLA (`jit_compile`)"): xla_words(result),
        "MirroredStrategy": mirrored(result),
    }


def numbers_frame(results: list[RunResult], labels: list[str], target: float | None) -> pd.DataFrame:
    """One column per run (named by its label), one row per figure: accuracy, time to the target, the steady epoch,
    warm-up, samples/s, GFLOP/s, share of peak, where its variables lived, XLA and MirroredStrategy (where a run
    used it). Runs as columns: at 1280x720 a row per run had wrapped its name over six lines."""
    columns = {label: _column(r, target) for r, label in zip(results, labels, strict=True) if r.epochs}
    table = pd.DataFrame(columns)
    if "MirroredStrategy" in table.index and (table.loc["MirroredStrategy"] == tables.MISSING).all():
        table = table.drop(index="MirroredStrategy")
    return table


NUMBERS_NOTE = N_(
    "Steady epoch: the mean of epochs 2 and later, training only; samples/s: their samples over their seconds, "
    "the headline's measure. Warm-up cost: epoch 1 minus the steady epoch. GFLOP/s: the model's training FLOPs per "
    "sample times samples/s. Share of peak: that ÷ the device's measured matrix-multiply peak. Time to an accuracy "
    "counts from the start, epoch 1's compiling included, so its ratio is not the headline's steady-state one."
)


def numbers_ui(results: list[RunResult], labels: list[str], target: float | None) -> None:
    """The runs' figures as one table, a column per run: a Markdown table wraps its headings, so nothing is cut."""
    table = numbers_frame(results, labels, target)
    if table.empty:
        return
    head = (
        "| | " + " | ".join(run_text.plain(str(c)) for c in table.columns) + " |\n|---|" + "---|" * len(table.columns)
    )
    # The figures' names are the page's own words (Markdown: `jit_compile` is code); a run's label or value may come
    # from another machine's file, so it is shown as text.
    body = [f"| {name} | " + " | ".join(run_text.plain(str(v)) for v in row) + " |" for name, row in table.iterrows()]
    st.markdown("\n".join([head, *body]))
    st.caption(_(NUMBERS_NOTE))


def compare_ui(
    results: list[RunResult],
    labels: list[str],
    by_value: bool = False,
    in_progress: Sequence | None = None,
    key: tuple | None = None,
) -> tuple[int, int] | None:
    """Charts, headline, numbers and what the models learned: what Train shows live and History for picked runs.

    by_value: the runs are one machine's comparison along an axis, so the headline names the axis' values
    (History's runs may come from several machines: their labels name the hosts). Returns the (baseline,
    other) pair the headline compares, or None. in_progress: per run, its epoch still training, or None.
    key: the runs' ids and progress (ui.draw_once): every page then shows one drawing per change, drawn once.
    """
    # The headline, then the charts, first on screen; the controls under them set what they show.
    headline, above = st.container(key="headline"), st.container()
    axis, target = controls_ui(results) if any(r.epochs for r in results) else ("clock", None)
    smoothing = smoothing_ui()
    settings = None if key is None else (key, tuple(labels), axis, target, by_value, smoothing)
    pair = pair_of(results)
    with headline:
        sentence = draw_once.once(settings, headline_ui, results, labels, pair, by_value)
    with above:
        draw_once.once(settings, charts_ui, results, labels, axis, target, in_progress, smoothing)
    draw_once.once(settings, below_ui, results, labels, target, sentence)
    return pair


def below_ui(results: list[RunResult], labels: list[str], target: float | None, sentence: str) -> None:
    """Under the charts: what the headline measures and its terms, the ratios, the numbers, what the models learned."""
    if sentence:
        st.caption(run_text.plain(_(MEASURED).format(calls=calls_words(results, labels))), help=_(MEASURED_HELP))
    compared.terms_ui(" ".join([sentence, *labels]))
    ratios.ratios_ui(results, labels)
    numbers_ui(results, labels, target)
    learned.learned_ui(results, labels)
