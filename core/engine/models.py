"""Model registry: softmax (the tutorial's), mlp and cnn, as Keras models for 28x28 images."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

NUM_CLASSES = 10


def _softmax(_: int):
    import keras

    # The tutorial's softmax regression: one dense layer 784 -> 10 with softmax.
    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(),
            keras.layers.Dense(NUM_CLASSES, activation="softmax"),
        ],
        name="softmax",
    )


def _mlp(hidden_units: int):
    import keras

    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(),
            keras.layers.Dense(hidden_units, activation="relu"),
            keras.layers.Dense(NUM_CLASSES, activation="softmax"),
        ],
        name="mlp",
    )


def _cnn(_: int):
    import keras

    # The Keras MNIST convnet example, without dropout so runs compare cleanly.
    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Reshape((28, 28, 1)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(NUM_CLASSES, activation="softmax"),
        ],
        name="cnn",
    )


@dataclass(frozen=True)
class ModelSpec:
    label: str
    description: str
    build: Callable[[int], object]


REGISTRY: dict[str, ModelSpec] = {
    "softmax": ModelSpec("Softmax regression", "the tutorial's one dense layer, 784 -> 10", _softmax),
    "mlp": ModelSpec("MLP", "784 -> hidden (ReLU) -> 10", _mlp),
    "cnn": ModelSpec("CNN", "two 3x3 conv + max-pool blocks, then dense 10", _cnn),
}


def build(name: str, hidden_units: int = 128):
    """A fresh, uncompiled Keras model; call it inside the tf.device scope it should live in."""
    return REGISTRY[name].build(hidden_units)


@lru_cache(maxsize=64)
def flops_per_sample(name: str, hidden_units: int = 128):
    """Training FLOPs per sample (forward and backward) as core.engine.flops.ModelFlops, counted from the layers."""
    from core.engine import flops
    from core.engine.tf_setup import tf

    # A throwaway copy on the CPU: counting needs the layers' shapes, not a GPU's memory.
    with tf().device("/CPU:0"):
        return flops.count(build(name, hidden_units))
