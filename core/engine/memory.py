"""A run's peak memory, estimated before it starts from the models' layer shapes, and the check that refuses it.

No TensorFlow: the page and the CLI call check(config) before anything is queued or stored, and a
worker killed by the kernel for want of memory (CNN batch 65536 needs more than 14 GiB) is worse
than one sentence saying so up front. The estimate, in float32 bytes:

- data: training and test images and labels. The execution modes copy them to the device once
  (tf.constant) and the worker keeps its NumPy copy, so on the CPU they count twice.
- parameters: weights, their gradients, and the optimizer's slots (SGD none, Adam two).
- activations: every layer's output for one batch (the larger of the training and evaluation
  batch) times ACTIVATION_FACTOR, for what the backward pass keeps and the gradients flowing back.

Free memory: the CPU's is MemAvailable (/proc/meminfo), read while the idle worker already holds
TensorFlow's own working set; a GPU's is its total minus what is in use, from nvidia-smi where it
is installed. Where free memory cannot be read (a Ray node, no nvidia-smi) nothing is refused.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.engine import models
from core.engine.data import SWEEP_POOL_SIZE, TEST_SIZE
from core.engine.devices import nvidia_smi
from core.machine.device_spec import device_name
from core.settings.config import ConfigError, SweepConfig, TrainConfig

FLOAT_BYTES = 4
SAMPLE_BYTES = math.prod(models.INPUT_SHAPE) * FLOAT_BYTES + 4  # float32 pixels and an int32 label
# Measured here: CNN batch 4096 peaked at 1.65 GB over the idle worker, 2.6x its forward
# activations (0.64 GB); CNN batch 32768 grew the old server by about 12.8 GB (estimate: 12.7).
ACTIVATION_FACTOR = 2.5
OPTIMIZER_SLOTS = {"sgd": 0, "adam": 2}
GIB = 2**30
MEMINFO = Path("/proc/meminfo")  # Linux's account of free memory (MemAvailable)
# A second worker's own working set (TensorFlow, Keras and the cached Fashion-MNIST), measured: 1.55 GB RSS idle.
WORKER_BYTES = int(1.6e9)
# The memory budget of the workers that wait between runs (core.pool): one per run of a two-run comparison, so
# both start the moment Run is pressed (3.2 GB), where that leaves RESERVE_BYTES free for the runs; else one.
WARM_RUNS = 2
RESERVE_BYTES = 2 * GIB
WARM_ENV = "TFDASH_WARM_WORKERS"


@dataclass(frozen=True)
class Layer:
    """One layer as the estimate sees it: its Keras class, its output shape for one sample, and its parameter count."""

    layer_type: str
    output: tuple[int, ...]
    parameters: int


def _dense(shape: tuple[int, ...], units: int) -> tuple[tuple[int, ...], int]:
    return (units,), (shape[-1] + 1) * units


def _conv(shape: tuple[int, ...], filters: int, size: int) -> tuple[tuple[int, ...], int]:
    side, _, channels = shape  # a "valid" convolution: the output is size - 1 pixels smaller on each axis
    return (side - size + 1, side - size + 1, filters), (size * size * channels + 1) * filters


def _pool(shape: tuple[int, ...], size: int) -> tuple[tuple[int, ...], int]:
    side, _, channels = shape
    return (side // size, side // size, channels), 0


# Keras layer class -> (input shape per sample, the layer's arguments) -> (output shape, parameters), as Keras
# computes them (tests/test_memory.py checks every model against the real one, so the two cannot drift apart).
SHAPES: dict[str, Callable[..., tuple[tuple[int, ...], int]]] = {
    "Flatten": lambda shape: ((math.prod(shape),), 0),
    "Reshape": lambda shape, target: (tuple(target), 0),
    "Dense": _dense,
    "Conv2D": _conv,
    "MaxPooling2D": _pool,
}


@dataclass(frozen=True)
class Estimate:
    """A run's peak memory in bytes on its device, by part, and on the host (where the data's NumPy copy lives)."""

    device: str
    data: int
    parameters: int
    activations: int
    host: int

    @property
    def total(self) -> int:
        """Bytes on the device the run trains on (on a CPU that includes the host's share)."""
        return self.data + self.parameters + self.activations + (self.host if _is_cpu(self.device) else 0)


def _is_cpu(device: str) -> bool:
    return device_name(device).device_type == "cpu"


def layers(model: str, hidden_units: int = 128) -> tuple[Layer, ...]:
    """The model's layers (output shape per sample, parameters) from its description, without building it."""
    shape, found = models.INPUT_SHAPE, []
    for spec in models.layer_specs(model, hidden_units):
        shape, parameters = SHAPES[spec.layer](shape, *spec.args)
        found.append(Layer(spec.layer, shape, parameters))
    return tuple(found)


def estimate(config: TrainConfig | SweepConfig, device: str | None = None) -> Estimate:
    """Peak memory of a training run, or of a sweep's largest batch on `device` (default: its first)."""
    model_layers = layers(config.model, config.hidden_units)
    activations_per_sample = sum(math.prod(layer.output) for layer in model_layers) * FLOAT_BYTES
    weights = sum(layer.parameters for layer in model_layers) * FLOAT_BYTES
    if isinstance(config, SweepConfig):
        device = device or config.devices[0]
        samples = SWEEP_POOL_SIZE if config.dataset == "synthetic" else 60_000
        batch, slots = max(config.batch_sizes), 0
    else:
        device = device or config.device
        from core.engine.executions.loop import EVAL_BATCH  # keras-fit evaluates at the training batch size

        samples = config.train_size + TEST_SIZE
        batch, slots = max(config.batch_size, EVAL_BATCH), OPTIMIZER_SLOTS.get(config.optimizer, 2)
    data = samples * SAMPLE_BYTES
    return Estimate(
        device=device,
        data=data,
        parameters=weights * (2 + slots),  # weights, gradients, optimizer slots
        activations=int(batch * activations_per_sample * ACTIVATION_FACTOR),
        host=data,
    )


def available_ram() -> int | None:
    """Bytes of memory the kernel says a new allocation can get without swapping (MemAvailable), or None."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_gpu(index: int) -> int | None:
    """Free bytes on GPU `index` (total minus used, from nvidia-smi), or None where that cannot be read."""
    found = nvidia_smi(index, "memory.total", "memory.used")
    if found is None or len(found) != 2:
        return None
    total, used = found
    return (total - used) * 2**20


def available(device: str) -> int | None:
    """Free bytes on a device as a user names it (cpu, gpu, gpu:N, gpu:all: the smallest), or None if unknown."""
    if "/" in device:
        return None  # a Ray node's device: its memory is that node's to say
    if _is_cpu(device):
        return available_ram()
    spec = device_name(device)
    if spec.mirrored:
        return None
    return available_gpu(spec.number)


def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"


def check(config: TrainConfig | SweepConfig) -> None:
    """Raise ConfigError (field batch_size) with one sentence if the run's estimated peak exceeds the free memory."""
    devices = config.devices if isinstance(config, SweepConfig) else (config.device,)
    for device in devices:
        need = estimate(config, device)
        free = available(device)
        place = "the CPU" if _is_cpu(device) else device.upper()
        if free is not None and need.total > free:
            raise ConfigError(
                "batch_size",
                f"This run would need about {_gib(need.total)} of memory on {place} at its peak "
                f"({_gib(need.activations)} of it for batch size {_batch(config):,} with model {config.model}), "
                f"but only {_gib(free)} is free; try a smaller batch size, model or training subset.",
            )
        if not _is_cpu(device):
            ram = available_ram()
            if ram is not None and need.host > ram:
                raise ConfigError(
                    "train_subset",
                    f"This run's data needs about {_gib(need.host)} of host memory, but only {_gib(ram)} is free; "
                    "try a smaller training subset.",
                )


def fits_together(configs: list[TrainConfig], waiting: int = 1) -> bool:
    """Whether the runs can all be held at once (they take turns, each in a worker of its own, core.turns).

    Host memory must hold every run's peak plus one more worker's working set per run beyond the `waiting`
    workers (free memory is read while they are already up); each GPU, its runs' peaks. Unknown: yes.
    """
    host, per_gpu = max(0, len(configs) - waiting) * WORKER_BYTES, {}
    for config in configs:
        need = estimate(config)
        host += need.total if _is_cpu(config.device) else need.host
        if not _is_cpu(config.device):
            per_gpu[config.device] = per_gpu.get(config.device, 0) + need.total
    places = [(available_ram(), host)] + [(available(device), need) for device, need in per_gpu.items()]
    return all(free is None or need <= free for free, need in places)


def warm_workers() -> int:
    """How many workers may wait with TensorFlow imported: one per run of a comparison (WARM_RUNS) where the free
    memory holds them and still a run's RESERVE_BYTES beside them, else one. $TFDASH_WARM_WORKERS overrides it."""
    if (asked := os.environ.get(WARM_ENV, "").strip()).isdigit() and int(asked) >= 1:
        return int(asked)
    free = available_ram()
    return WARM_RUNS if free is None or free >= WARM_RUNS * WORKER_BYTES + RESERVE_BYTES else 1


def _batch(config: TrainConfig | SweepConfig) -> int:
    return max(config.batch_sizes) if isinstance(config, SweepConfig) else config.batch_size
