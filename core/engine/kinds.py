"""The jobs the engine can run, by config type: what a Runner is given (core.runner never imports the engine).

Each job is a module-level function, so a worker process can import it by name. Its `admit`
runs in the server before the job is queued (refuse a run that cannot fit in memory); its
`warm_up` runs in a fresh worker before it says it is ready (import TensorFlow and Keras then,
not after someone pressed Run).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from core.config import MIN_SUBSET, SweepConfig, TrainConfig
from core.engine import data as datasets
from core.engine import memory
from core.engine.sweep import run_sweep
from core.engine.tf_setup import tf
from core.engine.training import train

# "import": a worker warms up by importing TensorFlow and Keras only (the tests' workers, whose jobs bring their own data).
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


def _train(config: TrainConfig, on_item, should_stop, run_id: str, take_turn=None):
    # An epoch in progress goes the same way as a finished one, without the result (the epoch is not in it yet).
    # take_turn: given when the runs of a comparison take turns (core.turns), each epoch timed while the others wait.
    return train(
        config, on_epoch=on_item, should_stop=should_stop, run_id=run_id, on_progress=lambda p: on_item(p, None),
        take_turn=take_turn,
    )  # fmt: skip


def _sweep(config: SweepConfig, on_item, should_stop, run_id: str):
    return run_sweep(config, on_point=on_item, should_stop=should_stop, run_id=run_id)


for _job in (_train, _sweep):
    _job.admit = memory.check
    _job.warm_up = warm_up
# Its runs may take turns epoch by epoch (core.turns) where memory holds them all at once; a sweep runs alone.
_train.fits_together = memory.fits_together

# config type -> job(config, on_item(item, result), should_stop() -> bool, run_id) -> result; an item may also be
# an EpochInProgress (result None): the runner keeps it for the page, the store never sees it.
JOB_KINDS: dict[type, Callable[..., Any]] = {TrainConfig: _train, SweepConfig: _sweep}
