"""What a run measures about its device and its step after epoch 1, outside the timed epochs: the device's roofs, the
step at two other batch sizes (core.engine.profile), the layers' products at the model's shapes (core.engine.shapes)
and a traced window of the step (core.engine.trace). Raw figures, recorded as core.results.measurements."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from core.engine import limits, models, profile, shapes, trace
from core.engine.job import Cancelled, StopCheck
from core.results.measurements import Limits, Measurements, ShapeTiming
from core.settings.config import TrainConfig


@dataclass
class Measuring:
    """What the set-up measured after epoch 1, and the rounds it goes on timing beside each steady epoch."""

    limits: Limits
    rounds: profile.Rounds | None
    shapes: ShapeTiming | None
    trace: Any  # core.measurements.TraceSummary, or None where tracing failed
    trace_file: bytes | None  # the XSpace, gzipped
    trace_error: str | None  # why there is no trace, where there is none
    setup_seconds: float

    def record(self) -> Measurements:
        """The run's typed record of all of it, as measured so far."""
        rounds = self.rounds
        return Measurements(
            limits=self.limits,
            fit=rounds.timing(rounds.batch) if rounds else None,
            check=rounds.timing(rounds.check) if rounds else None,
            shapes=self.shapes,
            trace=self.trace,
            trace_error=self.trace_error,
            setup_seconds=self.setup_seconds,
            round_seconds=rounds.round_seconds if rounds else 0.0,
        )


def device_limits(config: TrainConfig, tf_device: str, stop: StopCheck) -> Limits:
    """The device's peak (in the run's compute dtype: a bfloat16 run against a bfloat16 peak) and bandwidth."""
    dtype = models.COMPUTE_DTYPES[config.precision]
    found = limits.for_run(tf_device, dtype, stop)
    return Limits(
        peak_gflops=found.get("peak_gflops"),
        peak_tries=tuple(found.get("peak_tries") or ()),
        peak_dtype=dtype,
        peak_source=found.get("peak_source"),
        own_peak_gflops=found.get("own_peak_gflops"),
        bandwidth_gbs=found.get("bandwidth_gbs"),
        bandwidth_tries=tuple(found.get("bandwidth_tries") or ()),
    )


def measure_device(setup, tf_device: str, stop: StopCheck) -> Measuring:
    """The device's limits and the why's set-up figures, alone (in a turn of their own), untimed: the step at two other
    batch sizes (profile.Rounds, timed beside each steady epoch), the products at the model's shapes, and a traced
    window of the run's own step (core.engine.trace). Call inside the run's scope.

    After epoch 1, not before it: they take seconds (the rounds' and the trace's copies trace, and with XLA compile,
    models of their own), and before epoch 1 they kept the race chart empty that long after Run. setup.config's
    batch_size is the global batch. A Stop ends them between parts (raises Cancelled).
    """
    config, data, jit_compile = setup.config, setup.data, setup.jit_compile
    began = time.perf_counter()
    found_limits = device_limits(config, tf_device, stop)
    if stop():
        raise Cancelled
    counted = models.flops_per_sample(config.model, config.hidden_units).train
    rounds = profile.rounds_or_none(config, data, jit_compile, counted)
    if stop():
        raise Cancelled
    shape_timing = product_timing(config, rounds, tf_device)
    if stop():
        raise Cancelled
    summary, trace_file, trace_error = trace.trace_or_said(config, data, jit_compile, setup.execution)
    if stop():
        raise Cancelled
    return Measuring(found_limits, rounds, shape_timing, summary, trace_file, trace_error, time.perf_counter() - began)


def product_timing(config: TrainConfig, rounds: profile.Rounds | None, tf_device: str) -> ShapeTiming:
    """The layers' products timed alone at the model's shapes (core.engine.shapes), between the run's batch size and
    the rounds' other one; a wider pair where those two time within noise."""
    probe = models.build(config.model, config.hidden_units, config.precision)
    batches = (config.batch_size, rounds.batch) if rounds else ()
    dtype = models.COMPUTE_DTYPES[config.precision]
    per_sample = shapes.measure_or_none(probe, batches, tf_device, dtype)
    if per_sample is None and batches:
        batches = (config.batch_size, 4 * config.batch_size)
        per_sample = shapes.measure_or_none(probe, batches, tf_device, dtype)
    return ShapeTiming(tuple(sorted(batches)), per_sample, shapes.rate(probe, per_sample))
