"""Batch-size sweep: steady-state training throughput per device and batch size, and where they cross.

How one point (a device at a batch size) is measured:
  1. A fresh model and optimizer are built inside tf.device (variables live there; checked).
  2. The first call traces the step (and compiles it with XLA on a GPU) and runs one step: untimed.
  3. Warm-up: at least WARMUP_STEPS steps and WARMUP_SECONDS of them, untimed, so clocks, caches
     and the allocator settle.
  4. `repeats` timed repeats of `steps` steps each (auto: about REPEAT_SECONDS of work), wall clock
     around finished work. samples/s = every repeat's samples / their seconds (core.analysis.compare's measure);
     each repeat's own rate gives the min/max.
The step is training's own (core.engine.step.build_train_chunk), on synthetic data already on the
device, so neither the input pipeline nor a second training loop is what gets measured.

Use: run_sweep(SweepConfig(devices=("cpu", "gpu"), model="mlp", hidden_units=512)), or submit the
config to core.runner (progress arrives as "point" events; JobStatus.epochs holds SweepPoints).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np

from core.engine import data as datasets
from core.engine import devices, limits, models, traffic
from core.engine import peak as peaks
from core.engine.executions.base import for_precision, jit_compile_for
from core.engine.job import Cancelled, StopCheck, check_placement, never_stop, run_job
from core.engine.step import StepRunner, build_train_chunk
from core.engine.tf_setup import tf
from core.machine import backends
from core.results import SweepPoint, SweepResult, utc_now
from core.settings.config import MAX_STEPS, SweepConfig

# Timing targets, in seconds of device work.
WARMUP_STEPS, WARMUP_SECONDS = 3, 0.3
REPEAT_SECONDS = 0.5  # one timed repeat when steps is auto
# Indices per call are drawn once per point, up to this many (8 MB of int32).
INDEX_BUDGET = 2**21
# Plain SGD, the tutorial's optimizer; the rate does not change the arithmetic, and a small one
# keeps every model finite.
LEARNING_RATE = 0.01

PointCallback = Callable[[SweepPoint, SweepResult], None]


def _warm_up(runner: StepRunner, indices, stop: StopCheck) -> float:
    """Untimed steps until at least WARMUP_STEPS and WARMUP_SECONDS have passed; their seconds."""
    seconds, done = 0.0, 0
    while done < WARMUP_STEPS or seconds < WARMUP_SECONDS:
        count = runner.chunk
        seconds += runner.run(indices, count, stop).seconds
        done += count
    return seconds


def _auto_steps(per_step: float) -> int:
    return max(2, min(MAX_STEPS, math.ceil(REPEAT_SECONDS / max(per_step, 1e-7))))


def _measure_point(config: SweepConfig, name: str, tf_device: str, pool, batch: int, result, stop) -> SweepPoint:
    """One device at one batch size; call inside tf.device(tf_device)."""
    t = tf()
    import keras

    keras.utils.set_random_seed(config.seed)
    model = models.build(config.model, config.hidden_units, config.precision)
    result.devices[name]["variables_on"] = check_placement(model, tf_device)
    result.model.setdefault("parameters", int(model.count_params()))
    optimizer = for_precision(keras.optimizers.SGD(learning_rate=LEARNING_RATE), config.precision)
    x, y = pool
    step = build_train_chunk(model, optimizer, x, y, batch, result.devices[name]["jit_compile"])
    max_chunk = max(1, min(MAX_STEPS, INDEX_BUDGET // batch))
    rng = np.random.default_rng(config.seed)
    indices = t.constant(rng.integers(0, int(x.shape[0]), size=max_chunk * batch, dtype=np.int32))

    runner = StepRunner(step, max_chunk)
    compile_seconds = runner.run(indices, 1, stop).seconds
    warmup_seconds = _warm_up(runner, indices, stop)
    steps = config.steps or _auto_steps(runner.per_step)
    seconds = [runner.run(indices, steps, stop).seconds for _ in range(config.repeats)]
    rates = [steps * batch / s for s in seconds]
    # Every repeat's samples over every repeat's seconds, as core.analysis.compare reads any steady state.
    rate = steps * batch * len(seconds) / sum(seconds)
    gflops = result.model["train_flops_per_sample"] * rate / 1e9
    return SweepPoint(
        device=name,
        batch_size=batch,
        steps=steps,
        samples_per_second=rate,
        samples_per_second_min=min(rates),
        samples_per_second_max=max(rates),
        samples_per_second_repeats=tuple(rates),
        step_ms=statistics.median(seconds) / steps * 1000,
        gflops_per_second=gflops,
        utilisation=peaks.utilisation(gflops, result.devices[name].get("peak_gflops")),
        compile_seconds=compile_seconds,
        warmup_seconds=warmup_seconds,
    )


def _failed_point(name: str, batch: int, error: str) -> SweepPoint:
    return SweepPoint(name, batch, 0, None, None, None, error=error)  # 0 steps: nothing was timed


def _limits(tf_device: str, precision: str) -> dict[str, Any]:
    # In the compute dtype: a bfloat16 sweep against a bfloat16 matmul; the server's figures where it has them.
    found = limits.for_run(tf_device, models.COMPUTE_DTYPES[precision])
    size = peaks.MATRIX_SIZE["GPU" if "GPU" in tf_device.upper() else "CPU"] if found["peak_gflops"] else None
    return {"peak_gflops": found["peak_gflops"], "peak_matrix_size": size, "bandwidth_gbs": found["bandwidth_gbs"]}


def run_sweep(
    config: SweepConfig,
    on_point: PointCallback | None = None,
    should_stop: StopCheck | None = None,
    run_id: str | None = None,
) -> SweepResult:
    """Measure every device at every batch size; never raises (a failure is result.status == 'failed')."""
    stop = should_stop or never_stop
    result = SweepResult(config=config.to_dict(), started_at=utc_now(), run_id=run_id)

    def work() -> None:
        result.host = devices.host_info().to_dict()
        # Every device is resolved before anything is timed: a missing GPU fails at once.
        targets = {name: devices.resolve(name) for name in config.devices}
        result.model = _model_info(config)
        data = datasets.load(
            config.dataset, datasets.SWEEP_POOL_SIZE if config.dataset == "synthetic" else None, config.seed
        )
        for name, tf_device in targets.items():
            if stop():
                raise Cancelled
            _sweep_device(config, name, tf_device, data, result, on_point, stop)

    return run_job(
        result, work, out_of_memory=f"Out of memory measuring {config.model} on {', '.join(config.devices)}."
    )


def _model_info(config: SweepConfig) -> dict[str, Any]:
    counted = models.flops_per_sample(config.model, config.hidden_units)
    moved = traffic.count(models.build(config.model, config.hidden_units))  # the sweep trains with SGD
    return {
        "name": config.model,
        "hidden_units": config.hidden_units,
        "train_flops_per_sample": counted.train,
        "forward_flops_per_sample": counted.forward,
        "sample_bytes": moved.per_sample,
        "step_bytes": moved.per_step,
    }


def _sweep_device(config, name: str, tf_device: str, data, result: SweepResult, on_point, stop: StopCheck) -> None:
    """Every batch size on one device; from the first out-of-memory on, the larger ones are failed points."""
    t = tf()
    # The device's backend decides what xla="auto" means and refuses what it cannot run, in one sentence.
    backends.check(name, config.precision, config.xla, result.host)
    jit_compile = jit_compile_for(name, config.model, config.xla, result.host, "multi-step-loop")
    result.devices[name] = {
        "requested": name,
        "tf_device": tf_device,
        "name": devices.describe(name),
        "label": name.upper(),
        "jit_compile": jit_compile,
        **_limits(tf_device, config.precision),
    }
    out_of_memory: str | None = None
    with t.device(tf_device):
        # The pool is copied to the device once; every step gathers its batch there.
        pool = (t.constant(data.x_train), t.constant(data.y_train))
        for batch in config.batch_sizes:
            if out_of_memory:
                point = _failed_point(name, batch, out_of_memory)
            else:
                try:
                    point = _measure_point(config, name, tf_device, pool, batch, result, stop)
                except t.errors.ResourceExhaustedError:
                    out_of_memory = f"Out of memory on {name} from batch {batch}; smaller batches only."
                    point = _failed_point(name, batch, out_of_memory)
            result.points.append(point)
            if on_point is not None:
                on_point(point, result)
