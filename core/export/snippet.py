"""Code that reproduces a TrainConfig: the CLI command, and a plain TensorFlow/Keras script without this project."""

from __future__ import annotations

import inspect
import shlex
import sys
from pathlib import Path

from core.engine import models
from core.engine.data import DEBIAN_FASHION_DIR, FASHION_FILES, TEST_SIZE, synthetic_arrays
from core.engine.executions.base import jit_compile_for
from core.engine.executions.loop import MIN_CALLS_PER_EPOCH
from core.engine.step import MIN_CALL_SECONDS, TARGET_CALL_SECONDS
from core.settings.config import TrainConfig

ROOT = Path(__file__).resolve().parents[2]

# The dashboard's loaders, as plain code: Keras' cache, else Debian's files (offline); Keras downloads MNIST.
_FASHION = f'''FILES = {FASHION_FILES!r}


def load_data():
    """Fashion-MNIST from Keras' cache, else Debian's dataset-fashion-mnist package; else Keras downloads it."""
    keras_home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    for folder in (Path(keras_home) / "datasets" / "fashion-mnist", Path("{DEBIAN_FASHION_DIR}")):
        if all((folder / name).is_file() for name in FILES):
            # IDX files: a big-endian header (16 bytes for images, 8 for labels), then uint8 data.
            arrays = [np.frombuffer(gzip.open(folder / name).read(), np.uint8, offset=16 if "images" in name else 8)
                      for name in FILES]
            return (arrays[0].reshape(-1, 28, 28), arrays[1]), (arrays[2].reshape(-1, 28, 28), arrays[3])
    return keras.datasets.fashion_mnist.load_data()


(x_train, y_train), (x_test, y_test) = load_data()'''
_LOADERS = {
    "fashion_mnist": _FASHION,
    "mnist": "(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()",
    "synthetic": inspect.getsource(synthetic_arrays).rstrip()
    + f"\n\n\n(x_train, y_train), (x_test, y_test) = synthetic_arrays({{size}}, {TEST_SIZE}, SEED)",
}
_SCALE = [
    "# Scale images to the [0, 1] range, in float32 as the dashboard does.",
    'x_train, x_test = x_train.astype("float32") / 255.0, x_test.astype("float32") / 255.0',
    'y_train, y_test = y_train.astype("int32"), y_test.astype("int32")',
]

_OPTIMIZERS = {"sgd": "SGD", "adam": "Adam"}


def python_command() -> str:
    """The python that runs the dashboard: '.venv/bin/python' (from the repository root) when it lives there."""
    exe = Path(sys.executable)
    try:
        return str(exe.relative_to(ROOT))
    except ValueError:
        return str(exe)


def cli_command(config: TrainConfig, json_path: str | None = None, host: dict | None = None) -> str:
    """`.venv/bin/python -m core train ...` with every setting spelled out, run from the repository root; XLA as the run
    resolves it on `host` (core.engine.devices' host info; None: a GPU is a CUDA one), on or off, never auto."""
    args = [
        python_command(),
        "-m",
        "core",
        "train",
        "--dataset",
        config.dataset,
        "--model",
        config.model,
        "--device",
        config.device,
        "--epochs",
        str(config.epochs),
        "--batch-size",
        str(config.batch_size),
        "--learning-rate",
        f"{config.learning_rate:g}",
        "--optimizer",
        config.optimizer,
        "--seed",
        str(config.seed),
        "--execution",
        config.execution,
    ]
    if config.train_subset is not None:
        args += ["--train-subset", str(config.train_subset)]
    if config.model == "mlp":
        args += ["--hidden-units", str(config.hidden_units)]
    if config.precision != "float32":
        args += ["--precision", config.precision]
    # Said, not left to auto: the speed depends on it, and auto's choice depends on the device and the mode.
    args += [
        "--xla",
        "on" if jit_compile_for(config.device, config.model, config.xla, host, config.execution) else "off",
    ]
    if json_path:
        args += ["--json", json_path]
    return shlex.join(args)


# keras-fit-spe's N when the run's own (calibrated: about 0.2 s per execution) is not given.
DEFAULT_STEPS_PER_EXECUTION = 32


def _optimizer(config: TrainConfig) -> str:
    return f"keras.optimizers.{_OPTIMIZERS[config.optimizer]}(learning_rate={config.learning_rate!r})"


def _fit_lines(config: TrainConfig, steps_per_execution: int | None) -> tuple[list[str], list[str]]:
    chosen = "" if steps_per_execution else "  # each run calibrates its own: about 0.2 s per execution"
    spe = steps_per_execution or DEFAULT_STEPS_PER_EXECUTION
    setup = [
        f'    model.compile(optimizer={_optimizer(config)}, loss="sparse_categorical_crossentropy",',
        '                  metrics=["accuracy"],',
        *([f"                  steps_per_execution={spe},{chosen}"] if config.execution == "keras-fit-spe" else []),
        "                  jit_compile=JIT_COMPILE)",
    ]
    epoch = [
        "        # The epoch's batches as a tf.data pipeline made before the clock starts, "
        "as the dashboard makes them:",
        "        # one model.fit(x, y, epochs=N) call converts its arrays once, not once per epoch.",
        "        batches = tf.data.Dataset.from_tensor_slices((x_train[order], y_train[order]))",
        "        batches = batches.batch(BATCH).prefetch(tf.data.AUTOTUNE)",
        "        began = time.perf_counter()",
        "        model.fit(batches, epochs=1, shuffle=False, verbose=0)",
        "        seconds.append(time.perf_counter() - began)  # fit returns once its last step's results are in",
        "        loss, accuracy = model.evaluate(x_test, y_test, verbose=0)",
        '        print(f"epoch {epoch + 1}: test accuracy {accuracy:.4f}, {seconds[-1]:.3f} s of training")',
    ]
    return setup, epoch


def _loop_lines(config: TrainConfig, _: int | None) -> tuple[list[str], list[str]]:
    setup = [
        f"    optimizer = {_optimizer(config)}",
        "    # Under XLA each Dense kernel trains transposed, (units, inputs): XLA's CPU dot writes its gradient",
        "    # that way about 4x faster at the tutorial's shapes. The layers read the transposes (stateless_call).",
        "    dense = {id(layer.kernel) for layer in model.layers if isinstance(layer, keras.layers.Dense)}",
        "    pairs = [(v, JIT_COMPILE and id(v) in dense) for v in model.trainable_variables]",
        "    trained = [keras.Variable(tf.transpose(v.value)) if flip else v for v, flip in pairs]",
        "    optimizer.build(trained)",
        "    loss_fn = keras.losses.sparse_categorical_crossentropy",
        "    # The data goes to the device once; each step gathers its batch there.",
        "    x, y = tf.constant(x_train), tf.constant(y_train)",
        "",
        "    def copy(into, source):  # between the model's kernels and the transposed ones, at a call's ends",
        "        for a, b, (_, flip) in zip(into, source, pairs):",
        "            if flip:",
        "                a.assign(tf.transpose(b.value))",
        "",
        "    @tf.function(jit_compile=JIT_COMPILE, reduce_retracing=True)",
        "    def train_steps(order, start, count):",
        "        # `count` optimizer steps in one call, from batch `start` of `order`: no Python between steps.",
        "        # A while_loop and a gather keep `count` and `start` run-time values: XLA compiles once.",
        "        def step(i, loss):",
        "            idx = tf.gather(order, (start + i) * BATCH + tf.range(BATCH))",
        "            xb, yb = tf.gather(x, idx), tf.gather(y, idx)",
        "            with tf.GradientTape() as tape:",
        "                weights = [tf.transpose(v.value) if f else v.value for v, (_, f) in zip(trained, pairs)]",
        "                probs, _ = model.stateless_call(weights, [], xb, training=True)",
        "                loss = tf.reduce_mean(loss_fn(yb, probs))",
        "            optimizer.apply(tape.gradient(loss, trained), trained)",
        "            return i + 1, loss",
        "",
        "        copy(trained, model.trainable_variables)",
        "        loss = tf.while_loop(lambda i, _: i < count, step, (tf.constant(0), tf.constant(0.0)))[1]",
        "        copy(model.trainable_variables, trained)",
        "        return loss",
        "",
        "    # Calls sized as the dashboard sizes them: at most TARGET_CALL_SECONDS each, at least MIN_CALLS_PER_EPOCH",
        "    # an epoch, none under MIN_CALL_SECONDS; the first call (one step) traces the step.",
        "    chunk, most = 1, math.ceil(steps / MIN_CALLS_PER_EPOCH)",
    ]
    epoch = [
        "        order, done, calls = tf.constant(order), 0, 0",
        "        began = time.perf_counter()",
        "        while done < steps:",
        "            left = steps - done",
        "            count = math.ceil(left / math.ceil(left / chunk))  # equal calls: no short remainder",
        "            called = time.perf_counter()",
        "            float(train_steps(order, tf.constant(done), tf.constant(count)))  # waits for the device",
        "            per_step = max((time.perf_counter() - called) / count, 1e-7)",
        "            shortest = int(MIN_CALL_SECONDS / per_step)",
        "            chunk = max(1, min(steps, int(TARGET_CALL_SECONDS / per_step), max(most, shortest)))",
        "            done, calls = done + count, calls + 1",
        "        seconds.append(time.perf_counter() - began)",
        "        probs = model.predict(x_test, batch_size=1000, verbose=0)",
        "        accuracy = np.mean(probs.argmax(axis=1) == y_test)",
        '        print(f"epoch {epoch + 1}: test accuracy {accuracy:.4f}, '
        '{seconds[-1]:.3f} s of training in {calls} calls")',
    ]
    return setup, epoch


# Execution mode -> (lines after the model is built, lines that train and evaluate one epoch).
_TRAINING = {"keras-fit": _fit_lines, "keras-fit-spe": _fit_lines, "multi-step-loop": _loop_lines}


def _head(config: TrainConfig, tf_device: str) -> list[str]:
    loop = config.execution == "multi-step-loop"
    return [
        f'"""The dashboard\'s run of {config.model} on {config.dataset}, {config.execution} on {config.device}, '
        'in plain TensorFlow/Keras."""',
        "",
        "import gzip",
        *(["import math"] if loop else []),
        "import os",
        "import time",
        "from pathlib import Path",
        "",
        "import keras",
        "import numpy as np",
        "import tensorflow as tf",
        "",
        f"SEED, EPOCHS, BATCH = {config.seed}, {config.epochs}, {config.batch_size}",
        *(
            [
                f"TARGET_CALL_SECONDS, MIN_CALLS_PER_EPOCH, MIN_CALL_SECONDS = {TARGET_CALL_SECONDS}, "
                f"{MIN_CALLS_PER_EPOCH}, {MIN_CALL_SECONDS}"
            ]
            if loop
            else []
        ),
        # XLA set explicitly, as the dashboard does for every mode (auto: on for a GPU; on a CPU, only for the
        # multi-step loop of a dense model).
        f"JIT_COMPILE = {jit_compile_for(tf_device, config.model, config.xla, None, config.execution)}",
        *(
            [f'keras.config.set_dtype_policy("{config.precision}")  # this script trains one model: a global is fine']
            if config.precision != "float32"
            else []
        ),
    ]


def _data(config: TrainConfig) -> list[str]:
    subset, size = config.train_subset, config.train_subset or 60_000
    return [
        _LOADERS[config.dataset].format(size=size),
        *([] if config.dataset == "synthetic" else _SCALE),
        *(
            [f"x_train, y_train = x_train[:{subset}], y_train[:{subset}]  # the training subset"]
            if subset is not None and config.dataset != "synthetic"
            else []
        ),
    ]


# The speed as the dashboard measures it: every epoch after epoch 1 (which traces and compiles), its samples over its
# training seconds (evaluation timed apart), so the script's figure is the Samples / s of the page's table.
_SPEED = [
    "steady = seconds[1:]  # epoch 1 traces and compiles",
    "if steady:",
    "    rate = steps * BATCH * len(steady) / sum(steady)",
    '    print(f"steady state: {rate:,.0f} samples per second (epochs 2-{EPOCHS}, training only)")',
    "else:",
    '    print("steady state: none yet (epoch 1 traces and compiles: run 2 or more epochs to time one)")',
]


def keras_code(config: TrainConfig, steps_per_execution: int | None = None) -> str:
    """A self-contained script for one run: the same data, model, seed, batches, device, jit_compile and execution mode.

    It loads the data as the dashboard does, draws each epoch's batch order from the seed as every mode does, times each
    epoch's training as the dashboard does, prints each epoch's test accuracy and seconds, then the steady state's
    samples per second. steps_per_execution: the run's calibrated N (its device info), for keras-fit-spe.
    """
    tf_device = config.device_spec.tf_name
    setup, epoch = _TRAINING[config.execution](config, steps_per_execution)
    layers = [f"        {spec.source()}," for spec in models.layer_specs(config.model, config.hidden_units)]
    lines = [
        *_head(config, tf_device),
        "",
        "",
        *_data(config),
        "",
        "keras.utils.set_random_seed(SEED)",
        "# Variables live on the device they are created on: build the model inside the scope.",
        f'with tf.device("{tf_device}"):',
        "    model = keras.Sequential([",
        f"        keras.Input({models.INPUT_SHAPE}),",
        *layers,
        "    ])",
        "    steps = len(x_train) // BATCH",
        *setup,
        "    # Each epoch's batches: a permutation drawn from the seed, the last partial batch dropped, the same",
        "    # in every execution mode.",
        "    rng = np.random.default_rng(SEED)",
        "    seconds = []  # each epoch's training, wall clock around finished work",
        "    for epoch in range(EPOCHS):",
        '        order = rng.permutation(len(x_train))[: steps * BATCH].astype("int32")',
        *epoch,
        *_SPEED,
        "print(model.trainable_variables[0].value.device)  # where the model actually lived",
    ]
    return "\n".join(lines) + "\n"
