"""What every execution mode shares: the run's batch order, the optimizer, the XLA choice, the interface train()
drives."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from core.engine import data as datasets
from core.engine.job import StopCheck
from core.engine.timeline import Mark
from core.machine import backends
from core.machine.device_spec import device_name
from core.settings.config import XLA_ON_CPU, TrainConfig


def jit_compile_for(
    device: str,
    model: str | None = None,
    xla: str = "auto",
    host: dict[str, Any] | None = None,
    execution: str | None = None,
) -> bool:
    """The jit_compile of a run on `device` ('gpu:0' or '/GPU:0'): xla 'on'/'off' as asked, 'auto' by its backend.

    'auto' is on for a GPU XLA compiles for (core.machine.backends) and, on a CPU, only where XLA_ON_CPU
    measured it faster (`execution` and `model` name the run's). Keras' own jit_compile="auto" would turn
    XLA on for every device of a machine that has a GPU, CPU included, so a CPU run would change with the
    machine it is on. `host` describes the machine (devices.HostInfo.to_dict()); without it a GPU is taken
    to be a CUDA one. ConfigError where XLA cannot run (xla on for Apple's Metal GPU).
    """
    name = device_name(device).local  # a Ray node's 'node-b/cpu' is a CPU too
    if xla == "auto" and name.startswith("cpu") and model in XLA_ON_CPU.get(execution or "", frozenset()):
        return True
    backend, _ = backends.backend_of(name, host if host is not None else {})
    return backends.resolve_xla(xla, backend, name)


def make_optimizer(config: TrainConfig):
    """A fresh Keras optimizer for the run (SGD or Adam at its learning rate); LossScaleOptimizer around it for float16.

    float16's narrow range underflows small gradients to zero; Keras' LossScaleOptimizer scales the loss
    up before the gradients are taken and back down before they are applied. bfloat16 has float32's
    range and needs none.
    """
    import keras

    factories = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam}
    return for_precision(factories[config.optimizer](learning_rate=config.learning_rate), config.precision)


def for_precision(optimizer, precision: str):
    """The optimizer as `precision` needs it: inside Keras' LossScaleOptimizer for mixed_float16, else as it is."""
    import keras

    return keras.optimizers.LossScaleOptimizer(optimizer) if precision == "mixed_float16" else optimizer


class Execution:
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
        """Train one epoch; (mean batch loss, accuracy), with self.marks refilled. Raises Cancelled; the epoch is then
        discarded."""
        raise NotImplementedError

    def evaluate(self, should_stop: StopCheck) -> tuple[float, float]:
        """(mean loss, accuracy) over the whole test set. Raises Cancelled."""
        raise NotImplementedError

    def calls_like(self, other: Execution) -> None:
        """Size this mode's calls as `other`'s are now: a throwaway copy of the run's step then runs its calls."""

    def call_steps(self) -> int:
        """Optimizer steps in one of this mode's calls, as it runs them now."""
        return 1

    def info(self) -> dict[str, Any]:
        """What the result's device info records about this mode (jit_compile, steps_per_execution)."""
        return {"jit_compile": self.jit_compile}
