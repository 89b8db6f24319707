"""The run's step at two more batch sizes, timed beside its steady epochs: with the run's own step, a line of a fixed
cost per step and a cost per sample, and a third point that the line must predict.

seconds per step = fixed + batch x per_sample, from two points ("time the same step at two batch sizes to see the
overhead": Horace He, Making Deep Learning Go Brrrr). One point is the run's own step at its batch, as its steady
epochs timed it (core.analysis.why.step_pace); the other is timed here. The run's execution mode (executions.REGISTRY)
builds its own step at the other batch size for a throwaway model of the same layers, optimizer, precision and
jit_compile, on the first rows of the run's training data, and trains a short epoch that traces (and with XLA compiles)
it, after epoch 1 (core.engine.training.measure_device). Then one round (a short epoch of it) is timed just before each
steady epoch, in that epoch's turn, so whatever else the machine is doing slows both points alike. A round's calls are
cut from the marks the mode records anyway, as the run's own are (core.engine.timeline); each call after a round's first
gives a seconds per step, and each round's median call is held against the epoch it went just before
(core.analysis.why.step_line). The third batch size, between the two, is timed in the same rounds: the line is not
fitted on it, so its prediction there is a test the line can fail (core.analysis.why.prediction). Nothing here touches
the run's model, its batches or its timed epochs.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import replace

from core.engine import data as datasets
from core.engine import models, timeline
from core.engine.executions import REGISTRY
from core.engine.job import Cancelled, never_stop
from core.results import MAX_CALLS_PER_EPOCH
from core.results.measurements import StepTiming
from core.settings.config import TrainConfig

# Timed steps per round, sized from a guess of the step (the step floor plus FLOPs at GUESS_GFLOPS) to about
# ROUND_SECONDS of work, within MIN_STEPS..MAX_STEPS.
ROUND_SECONDS = 0.12
GUESS_GFLOPS = 25.0
MIN_STEPS, MAX_STEPS = 12, 400
# The second batch size: four times the run's, or a quarter of it where four times would make a slow step.
FACTOR = 4
SLOW_STEP = 0.02
MOST_ROUNDS = 5  # rounds beyond these (a run of many epochs) add time to its turns and little to the median


def guess_step(batch: int, flops_per_sample: float) -> float:
    """A rough seconds per step at `batch`, only to size the rounds."""
    return 1e-4 + batch * flops_per_sample / (GUESS_GFLOPS * 1e9)


def other_batch(batch: int, flops_per_sample: float, rows: int) -> int:
    """FACTOR x the run's batch where that step stays fast and fits the data, else batch / FACTOR."""
    larger = batch * FACTOR
    if larger * MIN_STEPS <= rows and guess_step(larger, flops_per_sample) <= SLOW_STEP:
        return larger
    return max(1, batch // FACTOR)


def _execution(config: TrainConfig, data: datasets.Dataset, jit_compile: bool, batch: int, guess: float):
    """config's execution mode at `batch` on a fresh model and the first rows of the data, its step traced."""
    # Never more rows than the data has: a run of a few hundred samples profiles on fewer steps.
    steps = max(2, min(max(MIN_STEPS, min(MAX_STEPS, math.ceil(ROUND_SECONDS / guess))), len(data.x_train) // batch))
    rows = steps * batch
    small = data.head(rows)
    probe_config = replace(config, batch_size=batch, train_subset=rows, epochs=1)
    model = models.build(config.model, config.hidden_units, config.precision)
    execution = REGISTRY[config.execution](probe_config, model, small, jit_compile)
    _epoch(execution)  # the first call traces (and with XLA compiles): not counted
    return execution


def _epoch(execution, should_stop=never_stop) -> list[float]:
    """One epoch of the execution: the seconds per step of each of its calls after the first (which may hold set-up),
    cut from its marks as the run's own calls are (core.engine.timeline), so both points come from one estimator."""
    execution.prepare_epoch()
    began = time.perf_counter()
    execution.train_epoch(should_stop)
    ended = time.perf_counter()
    calls = timeline.call_points(execution.marks, began, 0.0, 0, execution.config.batch_size, MAX_CALLS_PER_EPOCH)
    paces = [c.call_seconds / c.steps for c in calls[1:] if c.steps > 0 and c.call_seconds > 0]
    return paces or [(ended - began) / execution.steps]  # one execution per epoch: the whole epoch


def check_batch(batch: int, other: int) -> int | None:
    """The third batch size, between the line's two: their geometric mean, where it differs from both."""
    between = round(math.sqrt(batch * other))
    return between if between not in (batch, other) else None


class Rounds:
    """The run's step at two other batch sizes, built and traced now, then timed a round at a time: other_batch, the
    line's second point, and check_batch, which the line is not fitted on and must predict (core.analysis.why)."""

    def __init__(self, config: TrainConfig, data: datasets.Dataset, jit_compile: bool, flops_per_sample: float):
        """config.batch_size is the global batch (MirroredStrategy's replicas included). Build inside the run's
        device scope (or strategy scope), before the run's seed is set: the throwaway models draw their own weights."""
        self.batch = other_batch(config.batch_size, flops_per_sample, len(data.x_train))
        self.check = check_batch(config.batch_size, self.batch)
        batches = [b for b in (self.batch, self.check) if b is not None]
        self._executions = {
            b: _execution(config, data, jit_compile, b, guess_step(b, flops_per_sample)) for b in batches
        }
        self.seconds: dict[int, list[float]] = {b: [] for b in batches}  # each round's median call's seconds per step
        self._paces: dict[int, list[float]] = {b: [] for b in batches}  # every call's, over the rounds
        self.round_seconds = 0.0  # wall-clock seconds the rounds took, set-up of each included

    def time(self, should_stop=never_stop) -> None:
        """Time one round (untimed for the run: call outside its timed epochs); none after MOST_ROUNDS. A stop raises
        Cancelled."""
        if len(self.seconds[self.batch]) >= MOST_ROUNDS or not self._executions:
            return
        began = time.perf_counter()
        try:
            for b, execution in self._executions.items():
                paces = _epoch(execution, should_stop)
                self._paces[b] += paces
                self.seconds[b].append(statistics.median(paces))
        except Cancelled:
            raise
        except Exception:  # noqa: BLE001 - a failed round ends the rounds, never the run
            self._executions = {}
        self.round_seconds += time.perf_counter() - began

    def timing(self, batch: int | None) -> StepTiming | None:
        """What the rounds timed at `batch` (self.batch or self.check): each round's step and the median call."""
        if batch is None or not self.seconds.get(batch):
            return None
        paces = self._paces[batch]
        return StepTiming(batch, tuple(self.seconds[batch]), statistics.median(paces) if paces else None)


def rounds_or_none(config, data, jit_compile: bool, flops_per_sample: float):
    """Rounds(), or None where building it fails: a failed measurement never fails the run."""
    try:
        return Rounds(config, data, jit_compile, flops_per_sample)
    except Exception:  # noqa: BLE001
        return None
