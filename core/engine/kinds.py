"""The jobs the engine can run, by config type: what a Runner is given (core.runner never imports the engine).

Each kind is a class of static methods (core.runner.kind.JobKind), so a worker process imports its job by name.
`admit` runs in the server before the job is queued (refuse a run that cannot fit in memory); `warm_up` in a
fresh worker before it says it is ready (import TensorFlow and Keras then, not after someone pressed Run).
"""

from __future__ import annotations

import os

from core.engine import data as datasets
from core.engine import memory
from core.engine.sweep import run_sweep
from core.engine.tf_setup import tf
from core.engine.training import train
from core.settings.config import MIN_SUBSET, SweepConfig, TrainConfig

# What a zygote imports before it forks each worker (core.spawn.zygote): importing them runs no TensorFlow op.
PRELOAD = ("tensorflow", "keras", "core.engine.kinds")
# "import": a worker warms up by importing TensorFlow and Keras only (the tests' workers bring their own data).
WARM_UP_ENV = "TFDASH_WARM_UP"


def warm_up() -> None:
    """Import TensorFlow and Keras, load the tutorial's dataset, train a tiny model: what a first Run would wait for.

    A server that trained in its own process paid these once (import ~9 s, the dataset, autograph's
    conversion of the step); a worker per job pays them before its job arrives. The device's peak, floor
    and bandwidth are measured in the run, alone, after its epoch 1 (core.engine.training.measure_device).
    """
    tf()
    import keras  # noqa: F401 - imported for its side effect: Keras' own start-up

    if os.environ.get(WARM_UP_ENV) == "import":
        return
    if datasets.availability("fashion_mnist").available:
        datasets.load("fashion_mnist")  # the default dataset, cached in this worker for its one job
    # One tiny epoch of the default execution mode: autograph converts the step once per process. Not the
    # device's measurements: workers warm up side by side, and a peak measured beside another's import is low.
    tiny = TrainConfig(dataset="synthetic", train_subset=MIN_SUBSET, batch_size=MIN_SUBSET // 2, epochs=1)
    train(tiny, measurements=False)


class Training:
    """A training run (a JobKind, core.runner.kind): refused before it is queued if it cannot fit in memory; the runs
    of a comparison take turns epoch by epoch (core.runner.turns) where memory holds them all at once."""

    admit = staticmethod(memory.check)
    warm_up = staticmethod(warm_up)
    preload = PRELOAD
    fits_together = staticmethod(memory.fits_together)

    @staticmethod
    def run(config: TrainConfig, on_item, should_stop, run_id: str, take_turn=None):
        """train(), its finished epochs and its epochs in progress (result None) both to on_item."""
        return train(
            config,
            on_epoch=on_item,
            should_stop=should_stop,
            run_id=run_id,
            on_progress=lambda p: on_item(p, None),
            take_turn=take_turn,
        )


class Sweep:
    """A batch-size sweep (a JobKind): refused as a training run is; it runs alone."""

    admit = staticmethod(memory.check)
    warm_up = staticmethod(warm_up)
    preload = PRELOAD

    @staticmethod
    def run(config: SweepConfig, on_item, should_stop, run_id: str):
        """run_sweep(), each measured point to on_item."""
        return run_sweep(config, on_point=on_item, should_stop=should_stop, run_id=run_id)

    @staticmethod
    def fits_together(configs: list[SweepConfig], waiting: int = 1) -> bool:
        """Never: a sweep's points are timed alone."""
        return False


# config type -> its kind. An item may also be an EpochInProgress (result None): the runner keeps it for the page only.
JOB_KINDS: dict[type, type] = {TrainConfig: Training, SweepConfig: Sweep}
