"""Benchmark: core's training (the multi-step loop by default) against plain keras model.fit, in the same process.

The tutorial's model (softmax regression) on Fashion-MNIST, batch 100, SGD 0.1, on the
CPU. Epochs alternate: after each core epoch, one plain-fit epoch runs on its own
model, so machine noise hits both alike. Epoch 1 of each is warm-up (tracing) and is
left out of the medians. Plain fit is written as most code is (Keras' own shuffle), with
jit_compile set as core sets it for the device. Prints both median epoch times, both test
accuracies, what the per-epoch callback costs, and, last, speedup_vs_plain_keras_fit.

    .venv/bin/python bench/train_speed.py [--epochs 8] [--device cpu] [--execution multi-step-loop]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import baselines  # noqa: E402

from core.engine import data, devices, models  # noqa: E402
from core.engine.executions import jit_compile_for  # noqa: E402
from core.engine.tf_setup import tf  # noqa: E402
from core.engine.training import train  # noqa: E402
from core.settings.config import EXECUTIONS, TrainConfig, canonical_execution  # noqa: E402

ROUNDS = 2


def plain_keras(config: TrainConfig, tf_device: str):
    """What a user writes: compile, then fit one epoch at a time, then evaluate."""
    import keras

    with tf().device(tf_device):
        keras.utils.set_random_seed(config.seed + 1)
        model = models.build(config.model)
        model.compile(
            optimizer=keras.optimizers.SGD(learning_rate=config.learning_rate),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
            jit_compile=jit_compile_for(tf_device),  # as core sets it: never Keras' "auto"
        )
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8, help="epochs per side (>= 4: 3+ steady-state)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--execution", default="multi-step-loop", type=canonical_execution, choices=EXECUTIONS, help="core's mode"
    )
    args = parser.parse_args()
    config = TrainConfig(
        dataset="fashion_mnist", model="softmax", device=args.device, epochs=args.epochs, execution=args.execution
    )
    tf_device = devices.resolve(config.device)
    ds = data.load(config.dataset)
    model = plain_keras(config, tf_device)

    plain_times: list[float] = []
    plain_acc: list[float] = []
    callback_seconds: list[float] = []

    def interleave(metrics, result):
        # Not timed by core: core measures train_seconds around its own training only.
        began = time.perf_counter()
        result.to_frame()  # what the dashboard does with each epoch
        callback_seconds.append(time.perf_counter() - began)
        with tf().device(tf_device):
            began = time.perf_counter()
            model.fit(ds.x_train, ds.y_train, batch_size=config.batch_size, epochs=1, shuffle=True, verbose=0)
            plain_times.append(time.perf_counter() - began)
            plain_acc.append(model.evaluate(ds.x_test, ds.y_test, verbose=0)[1])

    result = train(config, on_epoch=interleave)
    if result.status != "completed":
        sys.exit(f"core training {result.status}: {result.error}")

    core_median = statistics.median(e.train_seconds for e in result.steady_epochs())
    plain_median = statistics.median(plain_times[1:])
    epoch_total = statistics.median(e.train_seconds + e.eval_seconds for e in result.steady_epochs())
    callback_cost = statistics.median(callback_seconds[1:]) / epoch_total

    info = devices.host_info()
    print(f"host: {info.cpu_model}, {info.cpu_cores} cores; TensorFlow {info.tensorflow}, Keras {info.keras}")
    print(f"config: softmax, fashion_mnist, batch {config.batch_size}, sgd {config.learning_rate}, {config.device}")
    extra = (
        f", steps_per_execution {result.device['steps_per_execution']}" if config.execution == "keras-fit-spe" else ""
    )
    print(f"core execution: {config.execution}, jit_compile {result.device['jit_compile']}{extra}")
    print(f"epochs each: {config.epochs} (epoch 1 is warm-up; medians over epochs 2-{config.epochs})")
    print("epoch  core_s  plain_fit_s  core_test_acc  plain_test_acc")
    for e, p, acc in zip(result.epochs, plain_times, plain_acc, strict=True):
        warm = "  (warm-up)" if e.warmup else ""
        print(f"{e.epoch:>5}  {e.train_seconds:6.3f}  {p:11.3f}  {e.test_accuracy:13.4f}  {acc:14.4f}{warm}")
    print(f"core median epoch seconds:       {core_median:.4f}")
    print(f"plain fit median epoch seconds:  {plain_median:.4f}")
    print(f"core test accuracy:              {result.final_test_accuracy():.4f}")
    print(f"plain fit test accuracy:         {plain_acc[-1]:.4f}")
    print(f"accuracy difference:             {result.final_test_accuracy() - plain_acc[-1]:+.4f}")
    print(f"per-epoch callback cost:         {callback_cost * 100:.2f}% of an epoch (target < 3%)")
    print(f"speedup_vs_plain_keras_fit: {plain_median / core_median:.2f}")
    references(ds, args.device, args.epochs, core_median, result.final_test_accuracy())


def references(ds, device: str, epochs: int, fastest: float, accuracy: float) -> None:
    """The plain-fit arm against one model.fit(epochs=N) call, per Quick demo model, and the fastest epoch against
    the seed tutorial's own TF1 program: each pair in the same process, taking turns over ROUNDS rounds."""
    arms: dict[str, list[float]] = {}
    calls: dict[str, list[float]] = {}
    program: list[float] = []
    for _ in range(ROUNDS):
        for name, settings in (("softmax", baselines.TUTORIAL), ("mlp", baselines.QUICK_MLP)):
            config = TrainConfig(
                dataset="fashion_mnist", device=device, epochs=epochs, execution="keras-fit", xla="off", **settings
            )
            run = train(config, measurements=False)
            arms.setdefault(name, []).extend(e.train_seconds for e in run.steady_epochs())
            calls.setdefault(name, []).extend(baselines.one_fit_call(ds, settings, epochs)[1:])
        times, program_accuracy = baselines.tutorial_program(ds, epochs)
        program += times[1:]
    for name in arms:
        arm, call = statistics.median(arms[name]), statistics.median(calls[name])
        print(
            f"{name}: the plain-fit arm's steady epoch {arm:.3f} s, one model.fit(epochs={epochs}) call's {call:.3f} s"
        )
        print(f"plain_fit_vs_one_fit_call: {name} {arm / call:.2f}")
    tutorial = statistics.median(program)
    print(f"the tutorial's TF1 program: {tutorial:.3f} s an epoch, test accuracy {program_accuracy:.4f} after {epochs}")
    print(f"vs_tutorial_program: {tutorial / fastest:.2f}")


if __name__ == "__main__":
    main()
