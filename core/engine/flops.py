"""Training FLOPs per sample, counted layer by layer from a Keras model.

The convention, exactly (the tests work it by hand for every model):

- A multiply-add is 2 FLOPs. Dense: 2 * inputs * units per output row. Conv2D: 2 * kh * kw *
  (in_channels / groups) per output element. A bias add is 1 FLOP per output element.
- Backward has two parts per layer with weights:
  - weight gradient: one matmul / convolution of the same size as the forward one (2 FLOPs per
    multiply-add), plus 1 FLOP per output element for the bias gradient (a sum over the batch);
  - input gradient: again the same size as the forward matmul / convolution, but only where an
    earlier layer has weights. The first weighted layer's input is the data, which needs no
    gradient; TensorFlow prunes that op, so counting it would overstate the work.
  So backward is about 2x forward for every weighted layer except the first, where it is 1x.
- Not counted: activations (ReLU, softmax), pooling, reshapes, the loss and the optimizer update.
  They are element-wise and memory-bound, a few percent of the total here, and the device's
  peak (core.engine.peak) is a matmul figure, so achieved / peak compares like with like.

Per training sample that gives: softmax 31,380 (forward 15,690); mlp with 128 hidden units
409,364; cnn 14,315,156 (tests/test_flops.py works each by hand).

Counters live in a registry keyed by Keras layer class name; a layer with no counter is an
error, so a new model cannot silently report too few FLOPs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


class UncountedLayerError(ValueError):
    """A model has a layer type with no FLOP counter."""


@dataclass(frozen=True)
class LayerFlops:
    """One layer's FLOPs per sample: forward, and the two halves of backward."""

    layer: str
    layer_type: str
    forward: int
    backward_weights: int  # dL/dW and dL/db
    backward_inputs: int  # dL/dx; 0 where no earlier layer has weights

    @property
    def train(self) -> int:
        """Forward plus backward."""
        return self.forward + self.backward_weights + self.backward_inputs


@dataclass(frozen=True)
class ModelFlops:
    """A model's FLOPs per sample, with the per-layer breakdown."""

    layers: tuple[LayerFlops, ...]

    @property
    def forward(self) -> int:
        """Inference FLOPs per sample."""
        return sum(layer.forward for layer in self.layers)

    @property
    def backward(self) -> int:
        """Backward-pass FLOPs per sample."""
        return sum(layer.backward_weights + layer.backward_inputs for layer in self.layers)

    @property
    def train(self) -> int:
        """Training FLOPs per sample: forward plus backward."""
        return self.forward + self.backward


Shape = tuple[int, ...]  # one sample's shape, batch axis dropped
# counter(layer, input shape, output shape) -> (multiply-adds, output elements that get a bias)
Counter = Callable[[object, Shape, Shape], tuple[int, int]]


def _dense(layer, shape_in: Shape, shape_out: Shape) -> tuple[int, int]:
    # Dense acts on the last axis; any axes before it are rows of one matmul.
    rows = math.prod(shape_in[:-1])
    macs = rows * shape_in[-1] * layer.units
    return macs, math.prod(shape_out) if layer.use_bias else 0


def _conv2d(layer, shape_in: Shape, shape_out: Shape) -> tuple[int, int]:
    channel_axis = -1 if layer.data_format == "channels_last" else 0
    kh, kw = layer.kernel_size
    per_output = kh * kw * shape_in[channel_axis] // layer.groups
    macs = math.prod(shape_out) * per_output
    return macs, math.prod(shape_out) if layer.use_bias else 0


def _free(layer, shape_in: Shape, shape_out: Shape) -> tuple[int, int]:
    return 0, 0


COUNTERS: dict[str, Counter] = {
    "Dense": _dense,
    "Conv2D": _conv2d,
    # No weights and no multiply-adds: moving data (reshape) or comparing it (pooling).
    "Flatten": _free,
    "Reshape": _free,
    "MaxPooling2D": _free,
    "Dropout": _free,
    "InputLayer": _free,
}


def _sample_shape(shape) -> Shape:
    return tuple(int(d) for d in tuple(shape)[1:])


def count(model) -> ModelFlops:
    """FLOPs per sample of a built Keras Sequential model, layer by layer (see the module docstring)."""
    shape = tuple(model.inputs[0].shape)
    layers = []
    weights_before = False  # has an earlier layer got weights, so that dL/dx is needed here?
    for layer in model.layers:
        layer_type = type(layer).__name__
        counter = COUNTERS.get(layer_type)
        if counter is None:
            raise UncountedLayerError(
                f"No FLOP counter for layer type {layer_type} ({layer.name}); add one to core.engine.flops.COUNTERS."
            )
        shape_out = tuple(layer.compute_output_shape(shape))
        macs, biased = counter(layer, _sample_shape(shape), _sample_shape(shape_out))
        trainable = bool(layer.trainable_weights)
        layers.append(
            LayerFlops(
                layer=layer.name,
                layer_type=layer_type,
                forward=2 * macs + biased,
                backward_weights=2 * macs + biased if trainable else 0,
                backward_inputs=2 * macs if weights_before else 0,
            )
        )
        weights_before = weights_before or trainable
        shape = shape_out
    return ModelFlops(tuple(layers))
