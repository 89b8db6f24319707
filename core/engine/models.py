"""Model registry: softmax (the tutorial's), mlp and cnn for 28x28 images, each described once as a table of layers.

The table (LayerSpec: a keras.layers class and its arguments) is the one description of a model: build() makes
the Keras model from it (and so flops.count and traffic.count count it), core.engine.memory works out its
shapes without TensorFlow, and core.export.snippet writes it as Show code's source.

Each layer gets the run's dtype policy (keras.DTypePolicy: "float32", "mixed_float16", "mixed_bfloat16")
through its own dtype= argument, never keras.mixed_precision.set_global_policy: a process-wide policy
would leak into the next run the worker trains.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.language.i18n import N_

NUM_CLASSES = 10
INPUT_SHAPE = (28, 28)  # one image, as every dataset gives it
HIDDEN = "hidden_units"  # in a LayerSpec's arguments: the run's hidden_units


@dataclass(frozen=True)
class LayerSpec:
    """One layer as Keras names it: keras.layers.<layer>(*args, activation=...); HIDDEN stands for hidden_units."""

    layer: str
    args: tuple = ()
    activation: str | None = None

    def resolved(self, hidden_units: int) -> LayerSpec:
        """This layer with HIDDEN replaced by the run's width."""
        return LayerSpec(self.layer, tuple(hidden_units if a == HIDDEN else a for a in self.args), self.activation)

    def source(self) -> str:
        """The layer as Python source: 'keras.layers.Dense(10, activation="softmax")'."""
        words = [repr(a) for a in self.args] + ([f'activation="{self.activation}"'] if self.activation else [])
        return f"keras.layers.{self.layer}({', '.join(words)})"


@dataclass(frozen=True)
class ModelSpec:
    """A model's name on the page, its one-line description, and its layers after keras.Input(INPUT_SHAPE)."""

    label: str
    description: str
    layers: tuple[LayerSpec, ...]


_OUTPUT = LayerSpec("Dense", (NUM_CLASSES,), "softmax")
REGISTRY: dict[str, ModelSpec] = {
    # The tutorial's softmax regression: one dense layer 784 -> 10 with softmax.
    "softmax": ModelSpec(
        N_("Softmax regression"), N_("the tutorial's one dense layer, 784 -> 10"), (LayerSpec("Flatten"), _OUTPUT)
    ),
    "mlp": ModelSpec(
        "MLP", N_("784 -> hidden (ReLU) -> 10"), (LayerSpec("Flatten"), LayerSpec("Dense", (HIDDEN,), "relu"), _OUTPUT)
    ),
    # The Keras MNIST convnet example, without dropout so runs compare cleanly.
    "cnn": ModelSpec(
        "CNN",
        N_("two 3x3 conv + max-pool blocks, then dense 10"),
        (
            LayerSpec("Reshape", ((28, 28, 1),)),
            LayerSpec("Conv2D", (32, 3), "relu"),
            LayerSpec("MaxPooling2D", (2,)),
            LayerSpec("Conv2D", (64, 3), "relu"),
            LayerSpec("MaxPooling2D", (2,)),
            LayerSpec("Flatten"),
            _OUTPUT,
        ),
    ),
}


def layer_specs(name: str, hidden_units: int = 128) -> tuple[LayerSpec, ...]:
    """Model `name`'s layers at the run's width, from the registry."""
    return tuple(spec.resolved(hidden_units) for spec in REGISTRY[name].layers)


def build(name: str, hidden_units: int = 128, precision: str = "float32"):
    """A fresh, uncompiled Keras model in the dtype policy `precision`; call it inside the tf.device scope it should
    live in."""
    import keras

    policy = keras.DTypePolicy(precision)
    layers = [
        getattr(keras.layers, spec.layer)(
            *spec.args, dtype=policy, **({"activation": spec.activation} if spec.activation else {})
        )
        for spec in layer_specs(name, hidden_units)
    ]
    return keras.Sequential([keras.Input(INPUT_SHAPE), *layers], name=name)


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
