"""Code that reproduces a TrainConfig: the CLI command, and plain TensorFlow/Keras without this project."""

from __future__ import annotations

import shlex

from core.config import TrainConfig

# Keras' own loaders (they download once, then read ~/.keras/datasets).
_LOADERS = {
    "fashion_mnist": [
        "(x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()",
        "# Scale images to the [0, 1] range.",
        "x_train, x_test = x_train / 255.0, x_test / 255.0",
    ],
    "mnist": [
        "(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()",
        "# Scale images to the [0, 1] range.",
        "x_train, x_test = x_train / 255.0, x_test / 255.0",
    ],
    "synthetic": [
        "# Synthetic images come from this project's generator (run from the repository root).",
        "from core.engine.data import load",
        "",
        "d = load('synthetic', {subset}, seed={seed})",
        "(x_train, y_train), (x_test, y_test) = (d.x_train, d.y_train), (d.x_test, d.y_test)",
    ],
}

# The same layers as core/models.py.
_MODELS = {
    "softmax": ["keras.layers.Flatten()", 'keras.layers.Dense(10, activation="softmax")'],
    "mlp": [
        "keras.layers.Flatten()",
        'keras.layers.Dense({hidden}, activation="relu")',
        'keras.layers.Dense(10, activation="softmax")',
    ],
    "cnn": [
        "keras.layers.Reshape((28, 28, 1))",
        'keras.layers.Conv2D(32, 3, activation="relu")',
        "keras.layers.MaxPooling2D(2)",
        'keras.layers.Conv2D(64, 3, activation="relu")',
        "keras.layers.MaxPooling2D(2)",
        "keras.layers.Flatten()",
        'keras.layers.Dense(10, activation="softmax")',
    ],
}

_OPTIMIZERS = {"sgd": "SGD", "adam": "Adam"}


def cli_command(config: TrainConfig, json_path: str | None = None) -> str:
    """`python -m core train ...` with every setting spelled out."""
    args = [
        "python", "-m", "core", "train",
        "--dataset", config.dataset,
        "--model", config.model,
        "--device", config.device,
        "--epochs", str(config.epochs),
        "--batch-size", str(config.batch_size),
        "--learning-rate", f"{config.learning_rate:g}",
        "--optimizer", config.optimizer,
        "--seed", str(config.seed),
        "--execution", config.execution,
    ]  # fmt: skip
    if config.train_subset is not None:
        args += ["--train-subset", str(config.train_subset)]
    if config.model == "mlp":
        args += ["--hidden-units", str(config.hidden_units)]
    if json_path:
        args += ["--json", json_path]
    return shlex.join(args)


def keras_code(config: TrainConfig) -> str:
    """A short runnable script: the same data, model, optimizer and device, with plain model.fit."""
    subset = config.train_subset
    lines = ["import keras", "import tensorflow as tf", ""]
    lines += [line.format(subset=subset, seed=config.seed) for line in _LOADERS[config.dataset]]
    if subset is not None and config.dataset != "synthetic":
        lines.append(f"x_train, y_train = x_train[:{subset}], y_train[:{subset}]  # the training subset")
    kind, _, index = config.device.partition(":")
    layers = "\n".join(f"        {layer.format(hidden=config.hidden_units)}," for layer in _MODELS[config.model])
    lines += [
        "",
        f"keras.utils.set_random_seed({config.seed})",
        "# Variables live on the device they are created on: build the model inside the scope.",
        f'with tf.device("/{kind.upper()}:{index or 0}"):',
        "    model = keras.Sequential([",
        "        keras.Input((28, 28)),",
        layers,
        "    ])",
        "    model.compile(",
        f"        optimizer=keras.optimizers.{_OPTIMIZERS[config.optimizer]}(learning_rate={config.learning_rate:g}),",
        '        loss="sparse_categorical_crossentropy",',
        '        metrics=["accuracy"],',
        "    )",
        f"    model.fit(x_train, y_train, batch_size={config.batch_size}, epochs={config.epochs}, "
        "validation_data=(x_test, y_test))",
        "print(model.trainable_variables[0].value.device)  # where the model actually lived",
    ]
    return "\n".join(lines) + "\n"
