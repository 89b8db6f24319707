"""What every execution mode shares: the run's batch order, the optimizer, the XLA choice, the interface train() drives."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from core.config import TrainConfig
from core.engine import data as datasets
from core.engine.job import StopCheck
from core.engine.timeline import Mark

# Models trained with XLA on the CPU too. Empty for now: the multi-step loop's `for i in tf.range(count)`
# makes count a compile-time constant under XLA, so each new call size recompiles (about 1.5 s here).
XLA_ON_CPU: frozenset[str] = frozenset()


def jit_compile_for(tf_device: str, model: str | None = None) -> bool:
    """XLA on for a GPU, off for a CPU; applied to every execution mode of a run alike.

    Keras' jit_compile="auto" would turn XLA on for every device of a machine that has a GPU, CPU
    included, so a mode that left it to Keras would compare XLA against no XLA. On the CPU XLA
    helps the small models but slows convolutions; on a GPU it fuses the small kernels.
    `model` names the model (core.engine.models), for a CPU choice by model: XLA_ON_CPU.
    """
    return tf_device.upper().lstrip("/").startswith("GPU") or model in XLA_ON_CPU


def make_optimizer(config: TrainConfig):
    """A fresh Keras optimizer for the run (SGD or Adam at its learning rate)."""
    import keras

    factories = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam}
    return factories[config.optimizer](learning_rate=config.learning_rate)


class Engine:
    """One execution mode, as train() drives it: prepare_epoch (untimed), train_epoch (timed), evaluate (timed).

    Build it inside the tf.device scope, after the model. Every mode trains on the same batches in
    the same order: each epoch's order is a permutation drawn from the run's seed, the last partial
    batch dropped, so accuracy differences between modes are float noise, not different data.
    """

    name: ClassVar[str]

    def __init__(self, config: TrainConfig, model, data: datasets.Dataset, jit_compile: bool):
        self.config, self.model, self.data = config, model, data
        self.jit_compile = jit_compile
        self.steps = config.steps_per_epoch
        self.samples_per_epoch = self.steps * config.batch_size
        self._rng = np.random.default_rng(config.seed)
        # The epoch's marks for the race against the clock (core.engine.timeline), filled by train_epoch.
        self.marks: list[Mark] = []

    def epoch_order(self) -> np.ndarray:
        """This epoch's training rows, batch after batch (int32), from the run's seed."""
        return self._rng.permutation(len(self.data.x_train))[: self.samples_per_epoch].astype(np.int32)

    def prepare_epoch(self) -> None:
        """Untimed set-up of the next epoch (its batch order, on the device or gathered on the host)."""
        raise NotImplementedError

    def train_epoch(self, should_stop: StopCheck) -> tuple[float, float]:
        """Train one epoch; (mean batch loss, accuracy), with self.marks refilled. Raises Cancelled; the epoch is then discarded."""
        raise NotImplementedError

    def evaluate(self, should_stop: StopCheck) -> tuple[float, float]:
        """(mean loss, accuracy) over the whole test set. Raises Cancelled."""
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        """What the result's device info records about this mode (jit_compile, steps_per_execution)."""
        return {"jit_compile": self.jit_compile}
