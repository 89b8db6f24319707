"""Model registry: softmax (the tutorial's), mlp and cnn, as Keras models for 28x28 images.

Each layer gets the run's dtype policy (keras.DTypePolicy: "float32", "mixed_float16", "mixed_bfloat16")
through its own dtype= argument, never keras.mixed_precision.set_global_policy: a process-wide policy
would leak into the next run the worker trains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from core.i18n import N_

NUM_CLASSES = 10


def _softmax(_: int, policy):
    import keras

    # The tutorial's softmax regression: one dense layer 784 -> 10 with softmax.
    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(dtype=policy),
            keras.layers.Dense(NUM_CLASSES, activation="softmax", dtype=policy),
        ],
        name="softmax",
    )


def _mlp(hidden_units: int, policy):
    import keras

    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(dtype=policy),
            keras.layers.Dense(hidden_units, activation="relu", dtype=policy),
            keras.layers.Dense(NUM_CLASSES, activation="softmax", dtype=policy),
        ],
        name="mlp",
    )


def _cnn(_: int, policy):
    import keras

    # The Keras MNIST convnet example, without dropout so runs compare cleanly.
    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Reshape((28, 28, 1), dtype=policy),
            keras.layers.Conv2D(32, 3, activation="relu", dtype=policy),
            keras.layers.MaxPooling2D(2, dtype=policy),
            keras.layers.Conv2D(64, 3, activation="relu", dtype=policy),
            keras.layers.MaxPooling2D(2, dtype=policy),
            keras.layers.Flatten(dtype=policy),
            keras.layers.Dense(NUM_CLASSES, activation="softmax", dtype=policy),
        ],
        name="cnn",
    )


@dataclass(frozen=True)
class ModelSpec:
    label: str
    description: str
    build: Callable[[int, object], object]  # (hidden units, keras.DTypePolicy) -> model


REGISTRY: dict[str, ModelSpec] = {
    "softmax": ModelSpec(N_("Softmax regression"), N_("the tutorial's one dense layer, 784 -> 10"), _softmax),
    "mlp": ModelSpec("MLP", N_("784 -> hidden (ReLU) -> 10"), _mlp),
    "cnn": ModelSpec("CNN", N_("two 3x3 conv + max-pool blocks, then dense 10"), _cnn),
}


def build(name: str, hidden_units: int = 128, precision: str = "float32"):
    """A fresh, uncompiled Keras model in the dtype policy `precision`; call it inside the tf.device scope it should live in."""
    import keras

    return REGISTRY[name].build(hidden_units, keras.DTypePolicy(precision))


# The dtype each precision computes in: the matmul peak a run is compared with is measured in it.
COMPUTE_DTYPES = {"float32": "float32", "mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


@lru_cache(maxsize=64)
def flops_per_sample(name: str, hidden_units: int = 128):
    """Training FLOPs per sample (forward and backward) as core.engine.flops.ModelFlops, counted from the layers."""
    from core.engine import flops
    from core.engine.tf_setup import tf

    # A throwaway copy on the CPU: counting needs the layers' shapes, not a GPU's memory.
    with tf().device("/CPU:0"):
        return flops.count(build(name, hidden_units))
