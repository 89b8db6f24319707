"""train(config) -> RunResult: a fresh model inside tf.device, timed honestly epoch by epoch.

Each epoch: the execution mode prepares the epoch's batch order (untimed), trains one epoch (timed:
wall clock around finished work, with a point for each call of the step loop: core.engine.timeline),
then evaluates on the test set (timed apart). Epoch 1 includes tracing and compilation and is flagged as
warm-up. Then, untimed, what the model learned (core.engine.learned) goes with the epoch to on_epoch;
the run keeps it on its last epoch only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from core.engine import data as datasets
from core.engine import devices, executions, flops, learned, load, models, timeline, traffic
from core.engine.executions import Execution, jit_compile_for
from core.engine.job import Cancelled, StopCheck, check_placement, never_stop, run_job
from core.engine.measure import device_limits, measure_device
from core.engine.tf_setup import tf
from core.machine import backends
from core.results import EpochInProgress, EpochMetrics, RunResult, utc_now
from core.results.measurements import Measurements
from core.settings.config import TrainConfig

EpochCallback = Callable[[EpochMetrics, RunResult], None]
ProgressCallback = Callable[[EpochInProgress], None]
# At most this often, an epoch in progress sends its calls so far to on_progress (a long epoch's live curve).
# It is sent from the stop check between calls, inside the timed epoch: a few hundred microseconds a second.
PROGRESS_SECONDS = 1.0


@dataclass(frozen=True)
class Hooks:
    """What a run tells its caller and asks of it: the epochs, the live progress, Stop, and its turn (core.turns)."""

    on_epoch: EpochCallback | None
    on_progress: ProgressCallback | None
    should_stop: StopCheck
    take_turn: Callable[[], None] | None

    def turn(self) -> None:
        """Wait until this run may go on alone; Cancelled if it was stopped while it waited."""
        if self.take_turn is not None:
            self.take_turn()
            if self.should_stop():
                raise Cancelled


@dataclass(frozen=True)
class SetUp:
    """What the set-up built inside the device scope, and what it measured there."""

    config: TrainConfig  # batch_size is the global batch: batch_size x replicas
    data: datasets.Dataset
    tf_device: str
    jit_compile: bool
    replicas: int
    model: Any
    execution: Execution
    variables_on: str
    train_flops: int  # per sample, forward and backward (core.engine.flops)
    strip: list[int]  # the test rows whose predictions the audience sees (core.engine.learned)
    x_strip: Any  # those rows' images, on the device


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
    hooks = Hooks(on_epoch, on_progress, should_stop or never_stop, take_turn)
    result = RunResult(
        config=config.to_dict(), host={}, device={"requested": config.device}, started_at=utc_now(), run_id=run_id
    )
    out_of_memory = (
        f"Out of memory on {config.device} with batch size {config.batch_size} "
        f"and model {config.model}; try a smaller batch size or model."
    )
    return run_job(result, lambda: _run(result, config, hooks, measurements), out_of_memory)


def _run(result: RunResult, config: TrainConfig, hooks: Hooks, measurements: bool) -> None:
    """The run from top to bottom: its turn, the set-up, the epochs, the device's measurements."""
    hooks.turn()
    result.host = devices.host_info().to_dict()
    tf_device = devices.resolve(config.device_spec)
    result.device = device_record(config, tf_device)  # where it was asked to run: kept if the set-up fails
    data = datasets.load(config.dataset, config.train_subset, config.seed)
    # The device's backend decides what xla="auto" means and refuses what it cannot run, in one sentence.
    backends.check(config.device, config.precision, config.xla, result.host)
    jit_compile = jit_compile_for(config.device, config.model, config.xla, result.host, config.execution)
    mirrored = devices.replicas(config.device_spec)
    strategy = tf().distribute.MirroredStrategy(devices=mirrored) if mirrored else None
    with strategy.scope() if strategy else tf().device(tf_device):
        setup = set_up(config, strategy, data, tf_device, jit_compile)
        result.device = device_record(config, tf_device, setup)
        measuring = None  # the set-up's measurements, then the rounds beside each steady epoch
        for epoch in range(1, config.epochs + 1):
            if epoch > 1:  # epoch 1 goes on in the set-up's turn: its first calls are drawn seconds after Run
                hooks.turn()
            if epoch == 2 and measurements:
                if hooks.on_progress is not None:  # seconds with no call: the page says what the run does meanwhile
                    hooks.on_progress(EpochInProgress(epoch, (), measuring=True))
                measuring = measure_device(setup, tf_device, hooks.should_stop)
                result.measured, result.trace = measuring.record(), measuring.trace_file
            if measuring is not None and measuring.rounds is not None:  # in this epoch's turn, untimed
                measuring.rounds.time(hooks.should_stop)
            metrics = train_epoch(setup, epoch, result.epochs, hooks)
            if result.epochs:  # only the last epoch keeps what it learned: a file stays small
                result.epochs[-1] = replace(result.epochs[-1], learned=None)
            result.epochs.append(metrics)
            if measuring is not None:
                result.measured = measuring.record()  # the rounds so far
            if hooks.on_epoch is not None:
                hooks.on_epoch(metrics, result)
        if measurements and measuring is None:  # a run of one epoch: its device's limits, no step to trace
            hooks.turn()
            result.measured = Measurements(limits=device_limits(setup.config, tf_device, hooks.should_stop))


def set_up(config: TrainConfig, strategy, data: datasets.Dataset, tf_device: str, jit_compile: bool) -> SetUp:
    """A fresh model and its execution mode, built inside the run's scope (call it there), and what they count."""
    import keras

    # gpu:all / cpu:all: MirroredStrategy over every such device, each replica a batch of batch_size,
    # so the global batch (what one optimizer step sees) is batch_size x replicas.
    replicas = strategy.num_replicas_in_sync if strategy else 1
    run_config = replace(config, batch_size=config.batch_size * replicas) if strategy else config
    keras.utils.set_random_seed(config.seed)
    # Build inside the scope: variables stay on the device they were created on.
    model = models.build(config.model, config.hidden_units, config.precision)
    variables_on = check_placement(model, tf_device)
    execution = executions.REGISTRY[config.execution](run_config, model, data, jit_compile)
    strip = learned.strip_indices(data.y_test, config.seed)
    return SetUp(
        config=run_config,
        data=data,
        tf_device=tf_device,
        jit_compile=jit_compile,
        replicas=replicas,
        model=model,
        execution=execution,
        variables_on=variables_on,
        train_flops=flops.count(model).train,
        strip=strip,
        x_strip=tf().constant(data.x_test[strip]),
    )


def device_record(config: TrainConfig, tf_device: str, setup: SetUp | None = None) -> dict[str, Any]:
    """What the run records about its device: where it was asked to run, then, once set up, what was built there."""
    record = {
        "requested": config.device,
        "tf_device": tf_device,
        "name": devices.describe(config.device_spec),
        "label": config.device.upper(),
    }
    if setup is None:
        return record
    model, execution = setup.model, setup.execution
    return {
        **record,
        "replicas": setup.replicas,
        "global_batch_size": setup.config.batch_size,
        "variables_on": setup.variables_on,
        # What the layers really compute in (the last layer's policy, as Keras applied it).
        "compute_dtype": model.layers[-1].dtype_policy.compute_dtype,
        "parameters": int(model.count_params()),
        **execution.info(),
        "train_flops_per_sample": setup.train_flops,
        **traffic.info(model, config.optimizer, setup.config.batch_size),
        "steps_per_epoch": execution.steps,
    }


def train_epoch(setup: SetUp, epoch: int, before: list[EpochMetrics], hooks: Hooks) -> EpochMetrics:
    """One epoch: its batch order (untimed), training (timed), evaluation (timed apart), then what the model learned.

    `before` holds the run's earlier epochs: the race's points go on from their seconds and samples.
    """
    execution, batch = setup.execution, setup.config.batch_size
    seconds_before, samples_before = sum(e.train_seconds for e in before), len(before) * execution.samples_per_epoch
    most = timeline.points_per_epoch(setup.config.epochs)
    execution.prepare_epoch()
    cpu_before = load.sample()
    began_training = time.perf_counter()

    def calls_so_far(marks: list) -> list:
        return timeline.call_points(marks, began_training, seconds_before, samples_before, batch, most)

    check = hooks.should_stop if hooks.on_progress is None else _sending_progress(epoch, setup, calls_so_far, hooks)
    train_loss, train_acc = execution.train_epoch(check)
    train_seconds = time.perf_counter() - began_training
    others = load.others_cores(cpu_before, load.sample())
    began = time.perf_counter()
    test_loss, test_acc = execution.evaluate(hooks.should_stop)
    eval_seconds = time.perf_counter() - began
    config, labels = setup.config, setup.data.y_test[setup.strip].tolist()
    return EpochMetrics(
        epoch=epoch,
        train_loss=timeline.finite(train_loss),
        train_accuracy=train_acc,
        test_loss=timeline.finite(test_loss),
        test_accuracy=test_acc,
        train_seconds=train_seconds,
        eval_seconds=eval_seconds,
        samples_per_second=execution.samples_per_epoch / train_seconds,
        warmup=epoch == 1,
        gflops_per_second=setup.train_flops * execution.samples_per_epoch / train_seconds / 1e9,
        calls=calls_so_far(execution.marks),
        learned=learned.of_model(setup.model, config.model, setup.x_strip, setup.strip, labels),
        others_cores=others,
    )


def _sending_progress(epoch: int, setup: SetUp, calls_so_far, hooks: Hooks) -> StopCheck:
    """should_stop() for one epoch's training that also sends its calls so far: the first call's at once (the race
    moves seconds after Run, epoch 1 included), then at most every PROGRESS_SECONDS."""
    sent = -PROGRESS_SECONDS

    def check() -> bool:
        nonlocal sent
        now = time.perf_counter()
        if now - sent >= PROGRESS_SECONDS and setup.execution.marks:
            sent = now
            # A copy: model.fit's marks are appended by Keras' callback threads.
            hooks.on_progress(EpochInProgress(epoch, tuple(calls_so_far(list(setup.execution.marks)))))
        return hooks.should_stop()

    return check
