"""The race against the clock: an epoch's calls of the step loop as CallPoints, from marks the execution modes record.

A mark is (time, steps done in the epoch, running loss, running accuracy), taken where the mode learns
that work has finished: after the multi-step loop fetches a call's results to the host, or in a Keras
batch-end callback, which sees the logs' values only once they are fetched. On a GPU nothing else syncs:
a time taken right after dispatching work says when it was queued, not when it was done.
"""

from __future__ import annotations

import math

import numpy as np

from core.results import MAX_CALLS_PER_EPOCH, CallPoint

Mark = tuple[float, int, float, float]

# Marks closer together than this merge into one point: model.fit marks every batch of a few milliseconds,
# from a pool of threads whose times jitter by milliseconds on a busy machine; the loop's calls are longer.
MIN_POINT_SECONDS = 0.025  # under the loop's shortest call (core.engine.step.MIN_CALL_SECONDS, 0.03 s)
# Points a whole run keeps at most; a run of many epochs keeps fewer per epoch, so its file stays small.
RUN_POINTS = 10_000


def finite(value: float) -> float:
    """value, or float32's largest number for a diverged (infinite or NaN) one: JSON has no NaN."""
    return value if math.isfinite(value) else float(np.finfo(np.float32).max)


def points_per_epoch(epochs: int) -> int:
    """How many points an epoch keeps at most, for a run of `epochs` epochs."""
    return max(10, min(MAX_CALLS_PER_EPOCH, RUN_POINTS // epochs))


def call_points(
    marks: list[Mark], began: float, seconds_before: float, samples_before: int, batch_size: int, most: int
) -> list[CallPoint]:
    """One epoch's marks as at most `most` CallPoints, timed from `began` (the epoch's timed start).

    seconds_before and samples_before: the run's training seconds and samples before this epoch. The
    last mark always ends a point, so the epoch's last point holds its totals.
    """
    marks = sorted(marks, key=lambda m: m[1])
    if not marks:
        return []
    # Keras runs async-safe callbacks on a pool of threads, which may report batches out of order: a step
    # had finished by the earliest time any later step was seen finished.
    times = np.minimum.accumulate(np.array([m[0] for m in marks])[::-1])[::-1]
    gap = max(MIN_POINT_SECONDS, (times[-1] - began) / most)
    points, last_time, last_steps = [], began, 0
    for i, ((_, steps, loss, accuracy), now) in enumerate(zip(marks, times, strict=True)):
        if steps <= last_steps or (now - last_time < gap and i < len(marks) - 1):
            continue
        points.append(
            CallPoint(
                seconds=round(seconds_before + float(now) - began, 4),
                samples=samples_before + steps * batch_size,
                steps=steps - last_steps,
                call_seconds=round(float(now) - last_time, 6),
                train_loss=round(finite(float(loss)), 6),
                train_accuracy=round(float(accuracy), 6),
            )
        )
        last_time, last_steps = float(now), steps
    return points
