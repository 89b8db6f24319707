"""Training bytes per sample, counted layer by layer from a Keras model, as core.engine.flops counts FLOPs.

The convention, exactly (tests/test_traffic.py works softmax and mlp by hand). Every tensor is
float32 (4 bytes) and counted as moved to or from memory once per use named here; caches, fusion
and the framework's own copies are not modelled, so this is the traffic the work needs at least:

- Input: the batch's images, read once by the first layer.
- Weights (kernel and bias), per layer that has them: read in forward; read again in backward
  only where the input gradient (dL/dx) is computed, i.e. where an earlier layer has weights (as
  flops.py counts it: the first weighted layer's input needs no gradient).
- Gradients: each weight's gradient written once.
- Optimizer: the update writes the new weights; Adam also writes its two moment tensors.
- Activations: every layer's output written in forward and read back once in backward. Flatten,
  Reshape and InputLayer are views of their input and move nothing.
- Not counted: the labels, the loss, the gradients of activations (they mirror the activations),
  and reads a cache would serve.

Input and activations grow with the batch; weights, gradients and optimizer state are moved once
per step whatever the batch, so per sample they amortise: bytes per sample at batch B =
per_sample + per_step / B. Softmax at batch 100: 4,158 bytes (7.5 FLOP per byte); mlp(128): 16,504.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.engine.flops import UncountedLayerError

FLOAT_BYTES = 4
# Layers whose output is a view of their input: no bytes of their own.
VIEWS = frozenset({"Flatten", "Reshape", "InputLayer"})
# Layers whose output is written and read back; their weights (if any) are counted from the layer itself.
MOVERS = frozenset({"Dense", "Conv2D", "MaxPooling2D", "Dropout"})
# Tensors the optimizer writes per weight: the new weight, plus Adam's first and second moments.
OPTIMIZER_WRITES = {"sgd": 1, "adam": 3}


@dataclass(frozen=True)
class ModelTraffic:
    """A model's bytes moved per training step, split into what grows with the batch and what does not."""

    input_per_sample: int
    activations_per_sample: int  # written and read back
    weights_per_step: int  # read in forward and backward
    gradients_per_step: int
    optimizer_per_step: int

    @property
    def per_sample(self) -> int:
        """Bytes that grow with the batch, per sample: input and activations."""
        return self.input_per_sample + self.activations_per_sample

    @property
    def per_step(self) -> int:
        """Bytes moved once per step whatever the batch: weights, gradients, optimizer state."""
        return self.weights_per_step + self.gradients_per_step + self.optimizer_per_step

    def bytes_per_sample(self, batch_size: int) -> float:
        """Bytes moved per training sample at this batch size (the weights amortise over the batch)."""
        return self.per_sample + self.per_step / batch_size


def count(model, optimizer: str = "sgd") -> ModelTraffic:
    """Bytes a built Keras Sequential model moves per training step (see the module docstring)."""
    shape = tuple(model.inputs[0].shape)
    input_elements = math.prod(int(d) for d in shape[1:])
    activations = weights_read = parameters = 0
    weights_before = False
    for layer in model.layers:
        layer_type = type(layer).__name__
        if layer_type not in VIEWS and layer_type not in MOVERS:
            raise UncountedLayerError(
                f"No byte counter for layer type {layer_type} ({layer.name}); add it to core.engine.traffic."
            )
        shape_out = tuple(layer.compute_output_shape(shape))
        if layer_type in MOVERS:
            activations += 2 * math.prod(int(d) for d in shape_out[1:])
        size = sum(math.prod(int(d) for d in w.shape) for w in layer.trainable_weights)
        parameters += size
        weights_read += size * (2 if weights_before else 1)
        weights_before = weights_before or size > 0
        shape = shape_out
    return ModelTraffic(
        input_per_sample=FLOAT_BYTES * input_elements,
        activations_per_sample=FLOAT_BYTES * activations,
        weights_per_step=FLOAT_BYTES * weights_read,
        gradients_per_step=FLOAT_BYTES * parameters,
        optimizer_per_step=FLOAT_BYTES * parameters * OPTIMIZER_WRITES[optimizer],
    )


def info(model, optimizer: str, batch_size: int) -> dict[str, float | int]:
    """What a result's device info records: bytes per sample at the run's batch, and its two parts."""
    moved = count(model, optimizer)
    return {
        "train_bytes_per_sample": moved.bytes_per_sample(batch_size),
        "sample_bytes": moved.per_sample,
        "step_bytes": moved.per_step,
    }
