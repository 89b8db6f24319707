"""Code that reproduces a TrainConfig: the CLI command, and plain TensorFlow/Keras without this project."""

from __future__ import annotations

import shlex

from core.config import TrainConfig
from core.engine.executions.base import jit_compile_for

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


# keras-fit-spe's N when the run's own (calibrated: about 0.2 s per execution) is not given.
DEFAULT_STEPS_PER_EXECUTION = 32


def _fit_lines(config: TrainConfig, steps_per_execution: int | None) -> list[str]:
    chosen = "" if steps_per_execution else "  # each run calibrates its own: about 0.2 s per execution"
    spe = [f"        steps_per_execution={steps_per_execution or DEFAULT_STEPS_PER_EXECUTION},{chosen}"]
    return [
        "    model.compile(",
        f"        optimizer=keras.optimizers.{_OPTIMIZERS[config.optimizer]}(learning_rate={config.learning_rate:g}),",
        '        loss="sparse_categorical_crossentropy",',
        '        metrics=["accuracy"],',
        *(spe if config.execution == "keras-fit-spe" else []),
        "        jit_compile={jit},",
        "    )",
        f"    model.fit(x_train, y_train, batch_size={config.batch_size}, epochs={config.epochs}, "
        "validation_data=(x_test, y_test))",
    ]


def _loop_lines(config: TrainConfig, _: int | None) -> list[str]:
    b = config.batch_size
    return [
        f"    optimizer = keras.optimizers.{_OPTIMIZERS[config.optimizer]}(learning_rate={config.learning_rate:g})",
        "    optimizer.build(model.trainable_variables)",
        "    loss_fn = keras.losses.sparse_categorical_crossentropy",
        "    # The data goes to the device once; each step gathers its batch there.",
        '    x, y = tf.constant(x_train, tf.float32), tf.constant(y_train.astype("int32"))',
        "",
        "    @tf.function(jit_compile={jit})",
        "    def train_steps(order):",
        "        # Many optimizer steps in one call: no Python between steps.",
        "        loss = tf.constant(0.0)",
        f"        for i in tf.range(tf.shape(order)[0] // {b}):",
        f"            idx = order[i * {b} : (i + 1) * {b}]",
        "            xb, yb = tf.gather(x, idx), tf.gather(y, idx)",
        "            with tf.GradientTape() as tape:",
        "                loss = tf.reduce_mean(loss_fn(yb, model(xb, training=True)))",
        "            grads = tape.gradient(loss, model.trainable_variables)",
        "            optimizer.apply(grads, model.trainable_variables)",
        "        return loss",
        "",
        f"    rng = np.random.default_rng({config.seed})",
        f"    steps = len(x_train) // {b}  # the last partial batch is dropped",
        f"    for epoch in range({config.epochs}):",
        "        # The dashboard runs an epoch in calls of about 0.2 s (so Stop is honoured); one call here.",
        f'        order = tf.constant(rng.permutation(len(x_train))[: steps * {b}].astype("int32"))',
        "        loss = train_steps(order)",
        "        probs = model.predict(x_test, batch_size=1000, verbose=0)",
        "        accuracy = np.mean(probs.argmax(axis=1) == y_test)",
        '        print(f"epoch {epoch + 1}: last batch loss {float(loss):.4f}, test accuracy {accuracy:.4f}")',
    ]


# Execution mode -> the lines inside the device scope after the model is built.
_TRAINING = {"keras-fit": _fit_lines, "keras-fit-spe": _fit_lines, "multi-step-loop": _loop_lines}


def keras_code(config: TrainConfig, steps_per_execution: int | None = None) -> str:
    """A short runnable script: the same data, model, optimizer, device, jit_compile and execution mode.

    keras-fit and keras-fit-spe are plain model.fit (with Keras' own shuffling); multi-step-loop is a
    tf.function of many steps. steps_per_execution: the run's calibrated N (its device info), for keras-fit-spe.
    """
    subset = config.train_subset
    lines = ["import keras", "import numpy as np", "import tensorflow as tf", ""]
    lines += [line.format(subset=subset, seed=config.seed) for line in _LOADERS[config.dataset]]
    if subset is not None and config.dataset != "synthetic":
        lines.append(f"x_train, y_train = x_train[:{subset}], y_train[:{subset}]  # the training subset")
    kind, _, index = config.device.partition(":")
    tf_device = f"/{kind.upper()}:{index or 0}"
    layers = "\n".join(f"        {layer.format(hidden=config.hidden_units)}," for layer in _MODELS[config.model])
    training = _TRAINING[config.execution](config, steps_per_execution)
    lines += [
        "",
        f"keras.utils.set_random_seed({config.seed})",
        "# Variables live on the device they are created on: build the model inside the scope.",
        f'with tf.device("{tf_device}"):',
        "    model = keras.Sequential([",
        "        keras.Input((28, 28)),",
        layers,
        "    ])",
        # XLA set explicitly, as the dashboard does for every mode (on for a GPU, off for a CPU).
        *(line.replace("{jit}", str(jit_compile_for(tf_device))) for line in training),
        "print(model.trainable_variables[0].value.device)  # where the model actually lived",
    ]
    return "\n".join(lines) + "\n"
