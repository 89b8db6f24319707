"""A run's why in whole sentences (core.language.i18n translates each; the figures go into their places): the trace and
its check against the run's own timer, the bound, the line and its prediction, the floors, and the advice."""

from __future__ import annotations

from core.analysis.compare import INTERVAL, bootstrap_interval
from core.analysis.roofline import si
from core.analysis.why import FACTOR, GAPS_WORDS, HELPS, OPS_WORDS, Line, Why, duration
from core.language.i18n import N_, _


def trace_check(w: Why) -> str | None:
    """How the trace's step compares with the run's own timer (and what tracing cost the traced copy)."""
    t = w.trace
    if t is None:
        return None
    cost = t.step_seconds / t.untraced_step_seconds - 1 if t.untraced_step_seconds else None
    if w.timer is None:
        said = _("TensorFlow's profiler traced {steps:,} steps of a copy of this step: {step} a step.")
        return said.format(steps=t.steps, step=duration(t.step_seconds))
    said = _(
        "TensorFlow's profiler traced {steps:,} steps of a copy of this step: {step} a step; the run's own timer "
        "says {timer} ({ratio:.2f}×). Tracing made the copy's step {cost:+.0%} ({untraced} untraced)."
    )
    return said.format(
        steps=t.steps,
        step=duration(t.step_seconds),
        timer=duration(w.timer),
        ratio=t.step_seconds / w.timer,
        cost=cost or 0.0,
        untraced=duration(t.untraced_step_seconds),
    )


BOUND_WORDS = {"overhead": N_("the time between ops"), "compute": N_("the products"), "memory": N_("the other ops")}


def bound_sentence(w: Why) -> str | None:
    """'compute-bound: ...' only where the trace puts at least half of the step there and its slices bear it out;
    else the leading parts, and why a half was not enough."""
    said = _bound_words(w)
    if said is None:
        return None
    name = w.leading
    interval = w.share_interval(name) if name else None
    if interval is None:
        return said
    words = _("Over the traced window's {n} slices, the {level:.0%} interval of that share is {low:.0%}-{high:.0%}.")
    if w.bound is None:
        words = _(
            "{part}: over half of the traced step, but over the traced window's {n} slices the {level:.0%} interval of "
            "that share is {low:.0%}-{high:.0%}: not a bound this window bears out."
        )
    part = _(BOUND_WORDS[name]).capitalize()
    shown = {"part": part, "n": len(w.slice_shares()), "level": INTERVAL, "low": interval[0], "high": interval[1]}
    return said + " " + words.format(**shown)


def _bound_words(w: Why) -> str | None:
    shares = w.shares()
    if not shares:
        return None
    if w.bound == "overhead":
        largest = max(w.trace.gaps, key=w.trace.gaps.get)
        said = _("overhead-bound: {share:.0%} of the traced step passes between ops, most of it {largest}.")
        return said.format(share=shares["overhead"], largest=_(GAPS_WORDS[largest]))
    if w.bound == "compute":
        said = _("compute-bound: {share:.0%} of the traced step is the layers' products (matmul/conv).")
        return said.format(share=shares["compute"])
    if w.bound == "memory":
        said = _(
            "memory-bound: {share:.0%} of the traced step is ops that move data more than they multiply "
            "(element-wise, the loss, the optimizer's update, copies)."
        )
        return said.format(share=shares["memory"])
    said = _(
        "No single bound: of the traced step, the products take {compute:.0%}, the other ops {memory:.0%} and "
        "the time between ops {overhead:.0%}."
    )
    return said.format(**shares)


def trace_parts(w: Why) -> str | None:
    """The trace's step part by part, largest first: 'matmul/conv 108 µs, input and copies 38 µs, ...'."""
    t = w.trace
    if t is None:
        return None
    parts = {**{_(OPS_WORDS[k]): v for k, v in t.ops.items()}, **{_(GAPS_WORDS[k]): v for k, v in t.gaps.items()}}
    shown = [f"{name} {duration(v)}" for name, v in sorted(parts.items(), key=lambda kv: -kv[1]) if v >= 5e-7]
    return ", ".join(shown)


def line_sentence(w: Why) -> str | None:
    """The line as a model, and how it did on the batch size it was not fitted on."""
    ln, p = w.line, w.prediction
    if ln is None:
        return None
    (b1, t1), (b2, t2) = ln.points
    said = _(
        "A model, not a measurement: a line through two timed steps (batch {b1:,}: {t1}; batch {b2:,}: {t2}) "
        "puts {fixed} on each step and {sample} on each sample."
    )
    text = said.format(
        b1=b1, t1=duration(t1), b2=b2, t2=duration(t2), fixed=duration(ln.fixed), sample=duration(ln.per_sample)
    )
    if p is None:
        return (
            text
            + " "
            + _(
                "It was not tested on a third batch size (a run recorded before that test), so no advice comes from it."
            )
        )
    tested = _(
        "It predicted {predicted} a step at batch {batch:,}, which it was not fitted on; timed: {timed} ({off:+.0%})."
    ).format(predicted=duration(p.predicted), batch=p.batch, timed=duration(p.timed), off=p.ratio - 1)
    if not p.holds:
        tested += " " + _("The line does not hold for this model, so no advice comes from it.")
    return f"{text} {tested}"


def floors_sentence(w: Why) -> str | None:
    """The floors, each measured alone: the least a step could take, not parts of it."""
    f, found = w.floors, []
    if f.products is not None:
        rate = _("the layers' products at these shapes ({gflops:,.1f} GFLOP/s)").format(gflops=f.products_gflops or 0)
        found.append(f"{rate} {duration(f.products)}")
    if f.peak is not None:
        rate = _("its FLOPs at the square matmul's peak ({gflops:,.0f} GFLOP/s)").format(gflops=f.peak_gflops)
        found.append(f"{rate} {duration(f.peak)}")
    if f.memory is not None:
        moved = _("its {bytes} at {bandwidth:,.1f} GB/s").format(
            bytes=si(f.bytes_per_step or 0, "B"), bandwidth=f.bandwidth_gbs
        )
        found.append(f"{moved} {duration(f.memory)}")
    if not found:
        return None
    return _("Floors per step, each measured alone (the least a step could take, not parts of it): {floors}.").format(
        floors="; ".join(found)
    )


def _gain(ln: Line, batch: int) -> tuple[int, float, bool]:
    (b1, t1), (b2, t2) = ln.points
    if b2 > batch:
        return b2, (b2 / t2) / (b1 / t1), True
    larger = batch * FACTOR
    return larger, (larger / ln.step(larger)) / (batch / ln.step(batch)), False


def batch_gain(w: Why) -> tuple[int, float, bool] | None:
    """(a larger batch, how many times the samples/s it gives, whether timed rather than predicted by the line)."""
    return _gain(w.line, w.batch) if w.line else None


def gain_spread(w: Why) -> tuple[float, float] | None:
    """The 90% percentile-bootstrap interval (compare's, seeded) of the median of batch_gain's gain over the lines
    through each round alone (two rounds: their two gains); None under two rounds. One round a load slowed moves the
    median little, where it would move a least-to-most span all the way."""
    import numpy as np

    gains = [_gain(ln, w.batch)[1] for ln in w.round_lines]
    return bootstrap_interval(gains, np.median) if len(gains) >= 2 else None


DEVICE_ADVICE = {
    "overhead": N_(
        "A faster device would not help much: the time between ops is paid per step, so fewer, larger steps help (a "
        "larger batch, or many steps per call as the multi-step loop runs them)."
    ),
    "compute": N_("A device that multiplies faster at these shapes helps."),
    "memory": N_("More memory bandwidth helps (a GPU has several times a CPU's)."),
}


def _batch_advice(w: Why, larger: int, times: float, timed: bool) -> str:
    """A larger batch's gain in a sentence; where the rounds put it either side of HELPS, that and no side."""
    how = _("timed beside the run's epochs") if timed else _("predicted by the line")
    spread = gain_spread(w)
    if spread and spread[0] < HELPS <= spread[1]:
        return _(
            "Whether a larger batch would help, the rounds do not agree: the {coverage:.0%} interval of their median "
            "is ×{low:.2f} to ×{high:.2f} samples per second at batch {larger:,} over {rounds} rounds ({how}), "
            "either side of ×{helps:.2f}."
        ).format(
            low=spread[0],
            high=spread[1],
            larger=larger,
            rounds=len(w.round_lines),
            how=how,
            helps=HELPS,
            coverage=INTERVAL,
        )
    if times >= HELPS:
        return _("A larger batch would help: ×{gain:.1f} samples per second at batch {larger:,} ({how}).").format(
            gain=times, larger=larger, how=how
        )
    return _("A larger batch would not help much: ×{gain:.2f} samples per second at batch {larger:,} ({how}).").format(
        gain=times, larger=larger, how=how
    )


def advice(w: Why) -> str | None:
    """What would help, only where the line held its prediction: a larger batch (timed or predicted), and by the
    trace's bound, whether a faster device would."""
    if w.prediction is None or not w.prediction.holds or (gain := batch_gain(w)) is None:
        return None
    device = DEVICE_ADVICE.get(w.bound or "")
    return _batch_advice(w, *gain) + (" " + _(device) if device else "")
