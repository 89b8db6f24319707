"""Comparing runs: the one speed measure with its interval, time to an accuracy, and the race against the clock.

Speed is training throughput in the steady state: the samples of every epoch after epoch 1 over the seconds they took
(EpochMetrics.train_seconds, so model.fit's per-epoch set-up counts). Samples, not steps, so runs with different batch
sizes, subsets or replica counts compare correctly; the ratio of two runs' throughputs is therefore the ratio of their
steady epochs for the same work. The interval comes from the same seconds, cut into the epochs' calls of the step loop
(EpochMetrics.calls, schema version 2): a bootstrap over those calls. A run without calls (a version 1 file) is
resampled by its steady epochs. The headline, the ratio tables, History, `python -m core compare`, the sweep
(core.results.crossover) and the roofline's points all read it here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.language.i18n import N_, _
from core.results import EpochInProgress, RunResult, SweepPoint, elapsed_seconds, steady_epoch_seconds

# At least this many steady-state calls of a run before its interval resamples calls rather than epochs.
MIN_CALLS = 3
BOOTSTRAP_RESAMPLES = 2000
INTERVAL = 0.90  # the bootstrap interval's coverage
# Accuracy targets are whole percentage points.
TARGET_STEP = 0.01
NEEDS = N_("A speedup needs a finished steady epoch (epoch 2 or later) of each run; epoch 1 is warm-up.")


@dataclass(frozen=True)
class Measurements:
    """Pieces of a run's steady state, each `samples` trained in `seconds`: its calls of the step loop, or its
    epochs."""

    samples: tuple[float, ...]
    seconds: tuple[float, ...]
    unit: str  # "call" or "epoch"

    @property
    def rate(self) -> float:
        """Training samples per second: every sample over every second, so a slow piece weighs what it took."""
        return sum(self.samples) / sum(self.seconds)

    def __len__(self) -> int:
        return len(self.seconds)


def global_batch(result: RunResult) -> int:
    """Samples per optimizer step: the batch size times MirroredStrategy's replicas (recorded since schema 2)."""
    return int(result.device.get("global_batch_size") or result.config.get("batch_size") or 1)


def steady_calls(result: RunResult) -> Measurements | None:
    """Each steady epoch's calls of the step loop, cut so they add up to the epoch's training seconds; None without.

    A call's seconds run from the previous one's end (the first from the epoch's timed start, so model.fit's set-up of
    the epoch is in it); what the epoch took after its last call (fit winding down) goes to that one.
    """
    batch, samples, seconds = global_batch(result), [], []
    for e in result.steady_epochs():
        calls = [c for c in e.calls if c.steps > 0 and c.call_seconds > 0]
        if not calls:
            return None
        tail = max(0.0, e.train_seconds - sum(c.call_seconds for c in calls))
        samples += [float(c.steps * batch) for c in calls]
        seconds += [c.call_seconds for c in calls[:-1]] + [calls[-1].call_seconds + tail]
    return Measurements(tuple(samples), tuple(seconds), "call") if samples else None


def measurements(result: RunResult) -> Measurements | None:
    """A run's steady-state measurements: its calls where it has MIN_CALLS, else its steady epochs; None before epoch
    2."""
    calls = steady_calls(result)
    if calls is not None and len(calls) >= MIN_CALLS:
        return calls
    epochs = [(e.samples_per_second * e.train_seconds, e.train_seconds) for e in result.steady_epochs()]
    epochs = [(n, s) for n, s in epochs if n > 0 and s > 0]
    return Measurements(*map(tuple, zip(*epochs, strict=True)), "epoch") if epochs else None


def throughput(result: RunResult) -> float | None:
    """The run's steady-state training samples per second (every steady epoch's samples over its seconds)."""
    found = measurements(result)
    return found.rate if found else None


# The steady epoch, as every table and line says it (page, History, `python -m core train` and `history`): the mean,
# so two runs' steady epochs for the same work are in the ratio of their throughputs, which a median is not.
STEADY_EPOCH = N_("the mean of epochs 2 and later")


def warmup_cost(result: RunResult) -> float | None:
    """What epoch 1 took beyond the steady epoch: tracing and compiling (on a noisy machine slightly negative)."""
    first, steady = next((e for e in result.epochs if e.warmup), None), steady_epoch_seconds(result)
    return first.train_seconds - steady if first is not None and steady is not None else None


def point_measurements(point: SweepPoint) -> Measurements | None:
    """A sweep point's timed repeats (steps x batch samples each), or its one median where no repeats were kept."""
    rates = point.samples_per_second_repeats or ((point.samples_per_second,) if point.samples_per_second else ())
    work = float(max(point.steps, 1) * point.batch_size)
    return Measurements(tuple(work for _ in rates), tuple(work / r for r in rates), "repeat") if rates else None


@dataclass(frozen=True)
class Speedup:
    """How many times `other`'s throughput is `baseline`'s, with the bootstrap interval of that ratio."""

    ratio: float  # other's samples/s / baseline's; above 1: other is faster
    low: float | None  # the INTERVAL bootstrap interval; None where a side has a single measurement
    high: float | None
    baseline: Measurements
    other: Measurements

    @property
    def count(self) -> int:
        """Measurements behind the ratio: both runs' pieces."""
        return len(self.baseline) + len(self.other)

    @property
    def unit(self) -> str:
        """'call' where both sides were cut into calls, else the coarser piece ('epoch', 'repeat')."""
        return self.baseline.unit if self.baseline.unit == self.other.unit else "epoch"


def ratio_of(baseline: Measurements, other: Measurements, seed: int = 0) -> Speedup:
    """other's rate over baseline's, with a percentile bootstrap interval: each side's pieces resampled with
    replacement.

    The resampling is seeded, so the same measurements always give the same sentence.
    """
    import numpy as np

    ratio = other.rate / baseline.rate
    if len(baseline) < 2 or len(other) < 2:
        return Speedup(ratio, None, None, baseline, other)
    rng = np.random.default_rng(seed)

    def rates(m: Measurements):
        idx = rng.integers(0, len(m), size=(BOOTSTRAP_RESAMPLES, len(m)))
        return np.asarray(m.samples)[idx].sum(axis=1) / np.asarray(m.seconds)[idx].sum(axis=1)

    tail = (1 - INTERVAL) / 2
    low, high = np.quantile(rates(other) / rates(baseline), [tail, 1 - tail])
    return Speedup(ratio, float(min(low, ratio)), float(max(high, ratio)), baseline, other)


def bootstrap_interval(values, statistic) -> tuple[float, float]:
    """The INTERVAL percentile-bootstrap interval of statistic(values, axis=1) (np.mean, np.median) over `values`
    resampled with replacement, seeded: the same values always give the same interval."""
    import numpy as np

    values = np.asarray(values)
    picks = np.random.default_rng(0).integers(0, len(values), size=(BOOTSTRAP_RESAMPLES, len(values)))
    tail = (1 - INTERVAL) / 2
    low, high = np.quantile(statistic(values[picks], axis=1), [tail, 1 - tail])
    return float(low), float(high)


def speedup(baseline: RunResult, other: RunResult, seed: int = 0) -> Speedup | None:
    """How many times faster `other` trains than `baseline`, in steady-state samples per second; None before epoch 2."""
    a, b = measurements(baseline), measurements(other)
    return ratio_of(a, b, seed) if a and b else None


WHAT = {
    "call": N_("training samples per second, over {count} calls of the step loop after epoch 1"),
    "epoch": N_("training samples per second, over {count} steady epochs after epoch 1"),
    "repeat": N_("training samples per second, over {count} timed repeats after epoch 1"),
}


def spread_words(found: Speedup, inverse: bool = False) -> str:
    """'2.6-3.2' (or, inverse, of 1/ratio), or 'no interval' where a side has one measurement."""
    if found.low is None or found.high is None:
        return _("no interval: a side has one measurement")
    low, high = (1 / found.high, 1 / found.low) if inverse else (found.low, found.high)
    return f"{low:.1f}-{high:.1f}"


def speedup_sentence(baseline: RunResult, other: RunResult, base_name: str, other_name: str) -> str:
    """'GPU:0 is 2.9× faster than CPU (2.6-3.2; training samples per second over 40 calls ... after epoch 1).'"""
    found = speedup(baseline, other)
    if found is None:
        return _(NEEDS)
    what = _(WHAT[found.unit]).format(count=found.count)
    if found.ratio >= 1:
        said = _("{fast} is {ratio:.1f}× faster than {slow} ({spread}; {what}).")
        return said.format(fast=other_name, ratio=found.ratio, slow=base_name, spread=spread_words(found), what=what)
    said = _("{slow} is {ratio:.1f}× slower than {fast} ({spread}; {what}).")
    return said.format(
        slow=other_name, ratio=1 / found.ratio, fast=base_name, spread=spread_words(found, True), what=what
    )


def slower_first(results: list[RunResult]) -> tuple[int, int] | None:
    """(baseline, other) indexes of two runs, the slower by throughput first, so a headline reads 'N× faster'."""
    if len(results) != 2:
        return None
    found = speedup(results[0], results[1])
    if found is None:
        return None
    return (0, 1) if found.ratio >= 1 else (1, 0)


# -- a comparison along one axis: every run against the first ------------------------------------------------
REFERENCE = "reference"  # ratios()' entry for the first run itself


def ratios(results: list[RunResult]) -> list[Speedup | str | None]:
    """Each run's speedup over the first (REFERENCE for the first itself; None before its epoch 2)."""
    return [REFERENCE] + [speedup(results[0], other) for other in results[1:]] if results else []


def ratio_words(found: Speedup | str | None) -> str:
    """'1.42x (1.30-1.55)' the first's throughput, below 1 slower; '1.00x (reference)'; '-' when unknown."""
    if found is REFERENCE:
        return _("1.00x (reference)")
    if not isinstance(found, Speedup):
        return "-"
    if found.low is None or found.high is None:
        return _("{ratio:.2f}x (no interval)").format(ratio=found.ratio)
    return f"{found.ratio:.2f}x ({found.low:.2f}-{found.high:.2f})"


def ratio_rows(results: list[RunResult]) -> list[tuple[str, str]]:
    """Per run: (its steady samples/s, its speedup over the first run), as the page's and the CLI's tables print
    them."""
    return [
        (f"{rate:,.0f}" if (rate := throughput(r)) else "-", ratio_words(found))
        for r, found in zip(results, ratios(results), strict=True)
    ]


# -- time to an accuracy, in the spirit of MLPerf's time-to-train -----------------------------------------
def time_to_accuracy(result: RunResult, target: float) -> float | None:
    """Training seconds (epoch 1's compiling included, evaluation excluded) until the first epoch whose test accuracy >=
    target; None if none did."""
    for e, elapsed in zip(result.epochs, elapsed_seconds(result), strict=True):
        if e.test_accuracy >= target:
            return elapsed
    return None


def time_to_accuracy_sentence(result: RunResult, target: float | None = None) -> str | None:
    """'time to 82% test accuracy: 3.21 s of training (epoch 2)'; target None: default_target([result]), said as such.
    None without epochs. English: the CLI's."""
    rule = f" ({TARGET_RULE})" if target is None else ""
    target = default_target([result]) if target is None else target
    if target is None:
        return None
    reached = time_to_accuracy(result, target)
    if reached is None:
        return f"time to {target:.0%} test accuracy{rule}: not reached in {len(result.epochs)} epochs"
    epoch = next(e.epoch for e in result.epochs if e.test_accuracy >= target)
    return f"time to {target:.0%} test accuracy{rule}: {reached:.2f} s of training (epoch {epoch})"


# The default target of 'time to X%', wherever a figure says one (the page's table and chart, `python -m core train`
# and `compare`): the same rule over the same runs gives the same X.
TARGET_RULE = N_("the highest whole percent every run reached")


def default_target(results: list[RunResult]) -> float | None:
    """TARGET_RULE: the highest whole percentage every run reached at some epoch (0.82 for 82.8% and 84.1%); None
    without epochs."""
    best = [max(e.test_accuracy for e in r.epochs) for r in results if r.epochs]
    if not best or len(best) < len(results):
        return None
    # A tiny tolerance, so an accuracy of exactly 0.82 (stored as 0.8199999...) still counts as 82%.
    return round(math.floor(min(best) / TARGET_STEP + 1e-9) * TARGET_STEP, 2)


def race_points(result: RunResult, in_progress: EpochInProgress | None = None) -> list[dict[str, Any]]:
    """The race against the clock: accuracy against cumulative training seconds, per call (train) and per epoch (test).

    Rows {"epoch", "seconds", "samples", "accuracy", "loss", "split"}, split "train" for each call's running training
    accuracy, "test" for each epoch's test accuracy at the epoch's end; in time order. in_progress: a running job's
    epoch still training, whose calls so far come last (the line moves within a long epoch).
    """
    rows, elapsed, samples = [], 0.0, 0
    for e in result.epochs:
        rows += [_call_row(e.epoch, c) for c in e.calls]
        elapsed += e.train_seconds
        samples = e.calls[-1].samples if e.calls else samples + round(e.samples_per_second * e.train_seconds)
        test = dict(seconds=elapsed, samples=samples, accuracy=e.test_accuracy, loss=e.test_loss, split="test")
        rows.append(dict(epoch=e.epoch, **test))
    if in_progress is not None and in_progress.epoch == len(result.epochs) + 1:  # else it finished meanwhile
        rows += [_call_row(in_progress.epoch, c) for c in in_progress.calls]
    return rows


def _call_row(epoch: int, c) -> dict[str, Any]:
    return dict(
        epoch=epoch, seconds=c.seconds, samples=c.samples, accuracy=c.train_accuracy, loss=c.train_loss, split="train"
    )
