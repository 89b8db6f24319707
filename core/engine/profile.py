"""A run's own step timed at two batch sizes before its first epoch: a fixed cost per step and a cost per sample.

seconds per step = fixed + batch x per_sample, from two points ("time the same step at two batch sizes to see the
overhead": Horace He, Making Deep Learning Go Brrrr). At each batch size the run's execution mode (ENGINES) builds
its own step for a throwaway model of the same layers, optimizer, precision and jit_compile, on the first rows of
the run's training data, and trains a short epoch that traces (and with XLA compiles) it; then ROUNDS more epochs
of each batch size, taking turns, are timed from their first call's end to their last by the marks the mode
records anyway (core.engine.timeline), and the median epoch's seconds per step is the figure. Nothing here touches the run's model,
its batches or its timed epochs. The fixed cost is what a step costs whatever its samples (Python, op dispatch,
kernel launches, the host-device sync); the per-sample cost is everything that grows with the batch.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import replace

from core.config import TrainConfig
from core.engine import data as datasets
from core.engine import models
from core.engine.executions import ENGINES
from core.engine.job import never_stop

# Timed steps per batch size, sized from a guess of the step (the step floor plus FLOPs at GUESS_GFLOPS) to about
# PROFILE_SECONDS of work, within MIN_STEPS..MAX_STEPS: both points together cost about 0.1 s of timed work.
PROFILE_SECONDS = 0.05
GUESS_GFLOPS = 25.0
MIN_STEPS, MAX_STEPS = 12, 400
# The second batch size: four times the run's, or a quarter of it where four times would make a slow step.
FACTOR = 4
SLOW_STEP = 0.02
ROUNDS = 3  # timed epochs per batch size, alternating; the median epoch's seconds per step is the figure


def guess_step(batch: int, flops_per_sample: float, floor_seconds: float | None) -> float:
    """A rough seconds per step at `batch`, only to size the profile."""
    return (floor_seconds or 1e-4) + batch * flops_per_sample / (GUESS_GFLOPS * 1e9)


def batch_sizes(batch: int, flops_per_sample: float, floor_seconds: float | None, rows: int) -> tuple[int, int]:
    """(the run's batch, another): FACTOR x where that step stays fast and fits the data, else batch / FACTOR."""
    larger = batch * FACTOR
    if larger * MIN_STEPS <= rows and guess_step(larger, flops_per_sample, floor_seconds) <= SLOW_STEP:
        return batch, larger
    return batch, max(1, batch // FACTOR)


def _engine(config: TrainConfig, data: datasets.Dataset, jit_compile: bool, batch: int, guess: float):
    """config's execution mode at `batch` on a fresh model and the first rows of the data, its step traced."""
    # Never more rows than the data has: a run of a few hundred samples profiles on fewer steps.
    steps = max(2, min(max(MIN_STEPS, min(MAX_STEPS, math.ceil(PROFILE_SECONDS / guess))), len(data.x_train) // batch))
    rows = steps * batch
    small = datasets.Dataset(data.name, data.x_train[:rows], data.y_train[:rows], data.x_test[:1], data.y_test[:1],
                             data.source)  # fmt: skip
    probe_config = replace(config, batch_size=batch, train_subset=rows, epochs=1)
    model = models.build(config.model, config.hidden_units, config.precision)
    engine = ENGINES[config.execution](probe_config, model, small, jit_compile)
    _epoch(engine)  # the first call traces (and with XLA compiles): not counted
    return engine


def _epoch(engine, should_stop=never_stop) -> float:
    """One epoch of the engine: seconds per step from its first call's end to its last (the first may hold set-up)."""
    engine.prepare_epoch()
    began = time.perf_counter()
    engine.train_epoch(should_stop)
    ended = time.perf_counter()
    marks = sorted(engine.marks, key=lambda m: m[1])
    # Keras runs async-safe callbacks on a pool of threads, in bursts: a step had finished by the earliest time any
    # later step was seen finished (as core.engine.timeline reads them), so the span, not each gap, is the measure.
    times = [min(m[0] for m in marks[i:]) for i in range(len(marks))]
    if len(marks) >= 2 and marks[-1][1] > marks[0][1]:
        return (times[-1] - times[0]) / (marks[-1][1] - marks[0][1])
    return (ended - began) / engine.steps  # one execution per epoch: the whole epoch


def profile(
    config: TrainConfig,
    data: datasets.Dataset,
    jit_compile: bool,
    flops_per_sample: float,
    floor_seconds: float | None = None,
    should_stop=never_stop,
) -> dict:
    """The device info's step_fixed_seconds and step_sample_seconds, with the two points they come from.

    config.batch_size is the global batch (MirroredStrategy's replicas included). Call inside the run's device scope
    (or strategy scope), before the run's seed is set: the throwaway models draw their own weights.
    """
    pair = batch_sizes(config.batch_size, flops_per_sample, floor_seconds, len(data.x_train))
    engines = {b: _engine(config, data, jit_compile, b, guess_step(b, flops_per_sample, floor_seconds)) for b in pair}
    steps: dict[int, list[float]] = {b: [] for b in pair}
    for _ in range(ROUNDS):  # the two batch sizes take turns, so the machine's noise hits both alike
        for b, engine in engines.items():
            steps[b].append(_epoch(engine, should_stop))  # a stop raises Cancelled
    (b1, t1), (b2, t2) = sorted((b, statistics.median(found)) for b, found in steps.items())
    per_sample = max(0.0, (t2 - t1) / (b2 - b1)) if b2 > b1 else 0.0
    fixed = max(0.0, t1 - b1 * per_sample)
    return {
        "step_fixed_seconds": fixed,
        "step_sample_seconds": per_sample,
        "profile_batches": [b1, b2],
        "profile_step_seconds": [t1, t2],
    }


def profile_or_none(
    config, data, jit_compile: bool, flops_per_sample: float, floor_seconds: float | None = None, should_stop=never_stop
) -> dict:
    """profile(), or the fields as None where it fails or is stopped: a failed measurement never fails the run."""
    try:
        return profile(config, data, jit_compile, flops_per_sample, floor_seconds, should_stop)
    except Exception:  # noqa: BLE001
        return {"step_fixed_seconds": None, "step_sample_seconds": None}
