"""Comparing runs: the steady-state speedup with its spread, time to an accuracy, and the race against the clock.

Speed comes from each epoch's calls of the step loop (EpochMetrics.calls, schema version 2): many
measurements of seconds per optimizer step, not two or three epoch times. A run without calls (a version 1
file) falls back to the median of its steady epochs (core.results.speedup_sentence).
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Any

from core.results import EpochInProgress, RunResult
from core.results import speedup_sentence as epoch_speedup_sentence

# At least this many steady-state calls on each side before a speedup is stated from calls.
MIN_CALLS = 3
BOOTSTRAP_RESAMPLES = 2000
INTERVAL = 0.90  # the bootstrap interval's coverage
# Accuracy targets are whole percentage points.
TARGET_STEP = 0.01


def steady_step_seconds(result: RunResult) -> list[float]:
    """Seconds per optimizer step of each call of the step loop after epoch 1 (tracing and compiling), in order.

    Each epoch's first call also carries the epoch's set-up (model.fit builds its data pipeline there): one
    slow measurement among many, which the median in speedup() passes over, as it does the stalls that
    other processes on a shared machine add. So the ratio is of the step rate each side sustains; the epoch
    times (EpochMetrics.train_seconds) include every set-up and stall.
    """
    return [c.step_seconds for e in result.epochs if not e.warmup for c in e.calls if c.steps > 0]


@dataclass(frozen=True)
class Speedup:
    """How many times faster `other` steps than `baseline`: the ratio of median step times and its interval."""

    ratio: float  # baseline's median seconds per step / other's; above 1: other is faster
    low: float  # the INTERVAL bootstrap interval of the ratio
    high: float
    baseline_calls: int
    other_calls: int

    @property
    def count(self) -> int:
        """Measurements behind the ratio: steady-state calls of both runs."""
        return self.baseline_calls + self.other_calls


def speedup(baseline: RunResult, other: RunResult, seed: int = 0) -> Speedup | None:
    """The ratio of the two runs' median steady-state seconds per step, with a percentile bootstrap interval.

    The interval: each run's calls resampled with replacement BOOTSTRAP_RESAMPLES times, the ratio of the
    two medians each time, and the middle INTERVAL of those ratios. The resampling is seeded, so the same
    runs always give the same sentence. None if either run has fewer than MIN_CALLS steady-state calls.
    """
    import numpy as np

    a, b = steady_step_seconds(baseline), steady_step_seconds(other)
    if len(a) < MIN_CALLS or len(b) < MIN_CALLS:
        return None
    rng = np.random.default_rng(seed)
    boot_a = np.median(rng.choice(a, size=(BOOTSTRAP_RESAMPLES, len(a))), axis=1)
    boot_b = np.median(rng.choice(b, size=(BOOTSTRAP_RESAMPLES, len(b))), axis=1)
    tail = (1 - INTERVAL) / 2
    low, high = np.quantile(boot_a / boot_b, [tail, 1 - tail])
    return Speedup(statistics.median(a) / statistics.median(b), float(low), float(high), len(a), len(b))


def speedup_sentence(baseline: RunResult, other: RunResult, base_name: str, other_name: str) -> str:
    """'GPU:0 is 2.9× faster than CPU (2.6-3.2 over 40 calls of the step loop)', or '... slower ...'.

    From the steady-state calls when both runs have enough; else from median steady epochs.
    """
    found = speedup(baseline, other)
    if found is None:
        return epoch_speedup_sentence(baseline, other, base_name, other_name)
    spread = f"over {found.count} calls of the step loop after epoch 1"
    if found.ratio >= 1:
        return (
            f"{other_name} is {found.ratio:.1f}× faster than {base_name} ({found.low:.1f}-{found.high:.1f} {spread})."
        )
    return (
        f"{other_name} is {1 / found.ratio:.1f}× slower than {base_name} "
        f"({1 / found.high:.1f}-{1 / found.low:.1f} {spread})."
    )


# -- a comparison along one axis: every run against the first ------------------------------------------------
REFERENCE = "reference"  # ratios()' entry for the first run itself


def median_step_seconds(result: RunResult) -> float | None:
    """The median steady-state seconds per optimizer step, from the calls; else a median steady epoch per step."""
    steps = steady_step_seconds(result)
    if steps:
        return statistics.median(steps)
    median, steady = result.median_epoch_seconds(), result.steady_epochs()
    if median is None or not steady or not steady[0].samples_per_second:
        return None
    per_epoch = steady[0].samples_per_second * steady[0].train_seconds / (result.config.get("batch_size") or 1)
    return median / per_epoch if per_epoch else None


def ratios(results: list[RunResult]) -> list[Speedup | str | None]:
    """Each run's speedup over the first (REFERENCE for the first itself; None without enough steady calls)."""
    return [REFERENCE] + [speedup(results[0], other) for other in results[1:]] if results else []


def ratio_words(found: Speedup | None) -> str:
    """'1.42x (1.30-1.55)' faster than the reference, below 1 slower; '-' when unknown."""
    return f"{found.ratio:.2f}x ({found.low:.2f}-{found.high:.2f})" if found else "-"


# -- time to an accuracy, in the spirit of MLPerf's time-to-train -----------------------------------------
def elapsed_seconds(result: RunResult) -> list[float]:
    """Training seconds at each epoch's end, summed from epoch 1 (its compiling included, evaluation excluded)."""
    return list(itertools.accumulate(e.train_seconds for e in result.epochs))


def time_to_accuracy(result: RunResult, target: float) -> float | None:
    """Training seconds (epoch 1's compiling included, evaluation excluded) until the first epoch whose test accuracy >= target; None if none did."""
    for e, elapsed in zip(result.epochs, elapsed_seconds(result), strict=True):
        if e.test_accuracy >= target:
            return elapsed
    return None


def time_to_accuracy_sentence(result: RunResult, target: float | None = None) -> str | None:
    """'time to 82% test accuracy: 3.21 s of training (epoch 2)'; target None: default_target([result]). None without epochs."""
    target = default_target([result]) if target is None else target
    if target is None:
        return None
    reached = time_to_accuracy(result, target)
    if reached is None:
        return f"time to {target:.0%} test accuracy: not reached in {len(result.epochs)} epochs"
    epoch = next(e.epoch for e in result.epochs if e.test_accuracy >= target)
    return f"time to {target:.0%} test accuracy: {reached:.2f} s of training (epoch {epoch})"


def default_target(results: list[RunResult]) -> float | None:
    """The highest whole percentage that every run reached at some epoch (0.82 for 82.8% and 84.1%); None without epochs."""
    best = [max(e.test_accuracy for e in r.epochs) for r in results if r.epochs]
    if not best or len(best) < len(results):
        return None
    # A tiny tolerance, so an accuracy of exactly 0.82 (stored as 0.8199999...) still counts as 82%.
    return round(math.floor(min(best) / TARGET_STEP + 1e-9) * TARGET_STEP, 2)


def race_points(result: RunResult, in_progress: EpochInProgress | None = None) -> list[dict[str, Any]]:
    """The race against the clock: accuracy against cumulative training seconds, per call (train) and per epoch (test).

    Rows {"epoch", "seconds", "samples", "accuracy", "loss", "kind"}, kind "train" for each call's running
    training accuracy, "test" for each epoch's test accuracy at the epoch's end; in time order. in_progress:
    a running job's epoch still training, whose calls so far come last (the line moves within a long epoch).
    """
    rows, elapsed, samples = [], 0.0, 0
    for e in result.epochs:
        for c in e.calls:
            rows.append(
                dict(epoch=e.epoch, seconds=c.seconds, samples=c.samples, accuracy=c.train_accuracy,
                     loss=c.train_loss, kind="train")
            )  # fmt: skip
        elapsed += e.train_seconds
        samples = e.calls[-1].samples if e.calls else samples + round(e.samples_per_second * e.train_seconds)
        rows.append(
            dict(epoch=e.epoch, seconds=elapsed, samples=samples, accuracy=e.test_accuracy, loss=e.test_loss,
                 kind="test")
        )  # fmt: skip
    if in_progress is not None and in_progress.epoch == len(result.epochs) + 1:  # else it finished meanwhile
        rows += [
            dict(epoch=in_progress.epoch, seconds=c.seconds, samples=c.samples, accuracy=c.train_accuracy,
                 loss=c.train_loss, kind="train")
            for c in in_progress.calls
        ]  # fmt: skip
    return rows
