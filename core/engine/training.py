"""train(config) -> RunResult: a fresh model inside tf.device, timed honestly epoch by epoch.

Each epoch: the execution mode prepares the epoch's batch order (untimed), trains one epoch (timed:
wall clock around finished work, with a point for each call of the step loop: core.engine.timeline),
then evaluates on the test set (timed apart). Epoch 1 includes tracing and compilation and is flagged as
warm-up. Then, untimed, what the model learned (core.engine.learned) goes with the epoch to on_epoch;
the run keeps it on its last epoch only.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import replace

from core import device_kinds, why
from core.config import TrainConfig
from core.engine import data as datasets
from core.engine import devices, flops, learned, limits, models, profile, shapes, timeline, traffic
from core.engine.executions import ENGINES, jit_compile_for
from core.engine.job import Cancelled, StopCheck, check_placement, never_stop, run_job
from core.engine.tf_setup import tf
from core.results import EpochInProgress, EpochMetrics, RunResult, utc_now

__all__ = ["Cancelled", "EpochCallback", "ProgressCallback", "StopCheck", "train"]

EpochCallback = Callable[[EpochMetrics, RunResult], None]
ProgressCallback = Callable[[EpochInProgress], None]
# At most this often, an epoch in progress sends its calls so far to on_progress (a long epoch's live curve).
# It is sent from the stop check between calls, inside the timed epoch: a few hundred microseconds a second.
PROGRESS_SECONDS = 1.0


def train(
    config: TrainConfig,
    on_epoch: EpochCallback | None = None,
    should_stop: StopCheck | None = None,
    run_id: str | None = None,
    on_progress: ProgressCallback | None = None,
    take_turn: Callable[[], None] | None = None,
    measurements: bool = True,
) -> RunResult:
    """Train a fresh model on config.device; never raises for a training failure.

    on_epoch(metrics, result) after each finished epoch; on_progress(EpochInProgress) during one, at most
    every PROGRESS_SECONDS; should_stop() is asked between calls of the step loop. take_turn() (core.turns),
    when given, blocks until this run may go on alone: before the set-up and epoch 1, and before each later epoch
    (epoch 2's turn begins with the measurements: measure_device; measurements=False leaves them out).
    """
    stop = should_stop or never_stop

    def turn() -> None:
        if take_turn is not None:
            take_turn()
            if stop():  # stopped while it waited
                raise Cancelled

    result = RunResult(
        config=config.to_dict(), host={}, device={"requested": config.device}, started_at=utc_now(), run_id=run_id
    )

    def work() -> None:
        t = tf()
        import keras

        turn()
        result.host = devices.host_info().to_dict()
        tf_device = devices.resolve(config.device)
        result.device.update(tf_device=tf_device, name=devices.describe(config.device), label=config.device.upper())
        data = datasets.load(config.dataset, config.train_subset, config.seed)
        # The device's kind decides what xla="auto" means and refuses what it cannot run, in one sentence.
        device_kinds.check(config.device, config.precision, config.xla, result.host)
        jit_compile = jit_compile_for(config.device, config.model, config.xla, result.host, config.execution)
        # gpu:all / cpu:all: MirroredStrategy over every such device, each replica a batch of batch_size,
        # so the global batch (what one optimizer step sees) is batch_size x replicas.
        mirrored = devices.replicas(config.device)
        strategy = t.distribute.MirroredStrategy(devices=mirrored) if mirrored else None
        replicas = strategy.num_replicas_in_sync if strategy else 1
        run_config = replace(config, batch_size=config.batch_size * replicas) if strategy else config
        result.device.update(replicas=replicas, global_batch_size=run_config.batch_size)
        with strategy.scope() if strategy else t.device(tf_device):
            keras.utils.set_random_seed(config.seed)
            # Build inside the scope: variables stay on the device they were created on.
            model = models.build(config.model, config.hidden_units, config.precision)
            result.device["variables_on"] = check_placement(model, tf_device)
            # What the layers really compute in (the last layer's policy, as Keras applied it).
            result.device["compute_dtype"] = model.layers[-1].dtype_policy.compute_dtype
            result.device["parameters"] = int(model.count_params())
            engine = ENGINES[config.execution](run_config, model, data, jit_compile)
            result.device.update(engine.info())
            train_flops = flops.count(model).train
            result.device["train_flops_per_sample"] = train_flops
            result.device.update(
                traffic.info(model, config.optimizer, run_config.batch_size), steps_per_epoch=engine.steps
            )
            strip = learned.strip_indices(data.y_test, config.seed)
            x_strip, y_strip = t.constant(data.x_test[strip]), data.y_test[strip].tolist()
            most_points = timeline.points_per_epoch(config.epochs)
            seconds_before, samples_before, rounds = 0.0, 0, None
            for epoch in range(1, config.epochs + 1):
                if epoch > 1:  # epoch 1 goes on in the setup's turn: its first calls are drawn seconds after Run
                    turn()
                if epoch == 2 and measurements:
                    rounds = measure_device(result.device, run_config, data, jit_compile, tf_device, stop)
                if rounds is not None:  # the other batch size's step, in this epoch's turn, just before it
                    rounds.time(stop)
                engine.prepare_epoch()
                began_training = time.perf_counter()
                calls_so_far = functools.partial(
                    timeline.call_points, began=began_training, seconds_before=seconds_before,
                    samples_before=samples_before, batch_size=run_config.batch_size, most=most_points,
                )  # fmt: skip
                checked = (
                    stop if on_progress is None else _progress_check(stop, epoch, engine, calls_so_far, on_progress)
                )
                train_loss, train_acc = engine.train_epoch(checked)
                train_seconds = time.perf_counter() - began_training
                began = time.perf_counter()
                test_loss, test_acc = engine.evaluate(stop)
                eval_seconds = time.perf_counter() - began
                calls = calls_so_far(engine.marks)
                metrics = EpochMetrics(
                    epoch=epoch,
                    train_loss=timeline.finite(train_loss),
                    train_accuracy=train_acc,
                    test_loss=timeline.finite(test_loss),
                    test_accuracy=test_acc,
                    train_seconds=train_seconds,
                    eval_seconds=eval_seconds,
                    samples_per_second=engine.samples_per_epoch / train_seconds,
                    warmup=epoch == 1,
                    gflops_per_second=train_flops * engine.samples_per_epoch / train_seconds / 1e9,
                    calls=calls,
                    learned=learned.snapshot(model, config.model, x_strip, strip, y_strip),
                )
                if result.epochs:  # only the last epoch keeps its snapshot: a file stays small
                    result.epochs[-1] = replace(result.epochs[-1], learned=None)
                result.epochs.append(metrics)
                if rounds is not None:  # the line through the run's own step so far and the other batch size's
                    result.device.update(rounds.info())
                    result.device.update(why.step_line(result))
                seconds_before += train_seconds
                samples_before += engine.samples_per_epoch
                if on_epoch is not None:
                    on_epoch(metrics, result)
            if measurements and "peak_gflops" not in result.device:  # a run of one epoch
                turn()
                measure_device(result.device, run_config, data, jit_compile, tf_device, stop)

    out_of_memory = (
        f"Out of memory on {config.device} with batch size {config.batch_size} "
        f"and model {config.model}; try a smaller batch size or model."
    )
    return run_job(result, work, out_of_memory)


def measure_device(
    device: dict, config: TrainConfig, data: datasets.Dataset, jit_compile: bool, tf_device: str, stop: StopCheck
) -> profile.Rounds | None:
    """The device's limits and the why's set-up figures into the run's device info, alone (in a turn of their own);
    the other batch size's step (profile.Rounds), to be timed beside each steady epoch, or None where it failed.

    After epoch 1, not before it: they take seconds (the profile traces, and with XLA compiles, a model of its own),
    and before epoch 1 they kept the race chart empty that long after Run. Every steady epoch still comes after
    them. config.batch_size is the global batch. A Stop ends them between parts (raises Cancelled).
    """
    # Share of peak against a matmul in the compute dtype: a bfloat16 run against a bfloat16 peak.
    device.update(limits.for_run(tf_device, models.COMPUTE_DTYPES[config.precision], stop))
    device["peak_dtype"] = device["compute_dtype"]
    if stop():
        raise Cancelled
    found, rounds = why_figures(config, data, jit_compile, tf_device, stop)
    device.update(found)
    if stop():
        raise Cancelled
    return rounds


def why_figures(
    config: TrainConfig, data: datasets.Dataset, jit_compile: bool, tf_device: str, stop: StopCheck = never_stop
) -> tuple[dict, profile.Rounds | None]:
    """The set-up's measurements for core.why, untimed: the products' seconds per sample; and the step at another
    batch size, built and traced (profile.Rounds; None where that failed), whose rounds go beside the steady epochs.

    config.batch_size is the global batch. Call inside the run's scope.
    """
    began = time.perf_counter()
    counted = models.flops_per_sample(config.model, config.hidden_units).train
    rounds = profile.rounds_or_none(config, data, jit_compile, counted)
    if stop():
        raise Cancelled
    probe = models.build(config.model, config.hidden_units, config.precision)
    batches = (config.batch_size, rounds.batch) if rounds else ()
    per_sample = shapes.measure_or_none(probe, batches, tf_device, models.COMPUTE_DTYPES[config.precision])
    rate = shapes.rate(probe, per_sample)
    return {"compute_sample_seconds": per_sample, "shape_gflops": rate,
            "why_setup_seconds": time.perf_counter() - began}, rounds  # fmt: skip


def _progress_check(stop: StopCheck, epoch: int, engine, calls_so_far, on_progress: ProgressCallback) -> StopCheck:
    """should_stop() for one epoch's training that also sends its calls so far: the first call's at once (the race
    moves seconds after Run, epoch 1 included), then at most every PROGRESS_SECONDS."""
    sent = -PROGRESS_SECONDS

    def check() -> bool:
        nonlocal sent
        now = time.perf_counter()
        if now - sent >= PROGRESS_SECONDS and engine.marks:
            sent = now
            # A copy: model.fit's marks are appended by Keras' callback threads.
            on_progress(EpochInProgress(epoch, tuple(calls_so_far(list(engine.marks)))))
        return stop()

    return check
