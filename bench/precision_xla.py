"""Benchmark: float32 vs mixed_bfloat16, XLA off vs on, for the tutorial's model and a wide MLP, in one process.

Each model (softmax on Fashion-MNIST at batch 100, the tutorial's; an MLP of width 1024 at batch 1024)
is built four times, one per (precision, XLA), with the training's own multi-step step
(core.engine.step). After a warm-up call that traces and compiles, rounds alternate between the four,
so machine noise hits each alike; each round times about ROUND_SECONDS of steps. Prints each variant's
median milliseconds per step and its speedup over float32 with XLA off, measured in the same run.

    .venv/bin/python bench/precision_xla.py [--device cpu] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.engine import data, devices, models  # noqa: E402
from core.engine.executions import make_optimizer  # noqa: E402
from core.engine.job import never_stop  # noqa: E402
from core.engine.step import StepRunner, build_train_chunk  # noqa: E402
from core.engine.tf_setup import tf  # noqa: E402
from core.settings.config import TrainConfig  # noqa: E402

ROUND_SECONDS = 0.5
MODELS = {"tutorial softmax, batch 100": ("softmax", 128, 100, 0.1), "MLP 1024, batch 1024": ("mlp", 1024, 1024, 0.1)}
VARIANTS = [(p, x) for p in ("float32", "mixed_bfloat16") for x in (False, True)]


def build(name: str, hidden: int, batch: int, lr: float, precision: str, xla: bool, dataset, tf_device: str):
    """A StepRunner over the dataset, on the device, and the epoch order it walks."""
    t = tf()
    config = TrainConfig(model=name, hidden_units=hidden, batch_size=batch, learning_rate=lr, precision=precision)
    with t.device(tf_device):
        model = models.build(name, hidden, precision)
        optimizer = make_optimizer(config)
        optimizer.build(model.trainable_variables)
        x, y = t.constant(dataset.x_train), t.constant(dataset.y_train)
        steps = len(dataset.x_train) // batch
        order = t.constant(t.range(steps * batch).numpy())
        runner = StepRunner(build_train_chunk(model, optimizer, x, y, batch, xla), steps)
    return runner, order, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    tf_device = devices.resolve(args.device)
    dataset = data.load("fashion_mnist")
    print(f"device {args.device} ({devices.describe(args.device)}), {args.rounds} alternating rounds")
    print(f"{'model':<28} {'precision':<15} {'XLA':<4} {'ms/step':>9} {'speedup':>8}")
    for label, (name, hidden, batch, lr) in MODELS.items():
        runs = {v: build(name, hidden, batch, lr, v[0], v[1], dataset, tf_device) for v in VARIANTS}
        for runner, order, steps in runs.values():  # trace and compile, then let the call size settle
            runner.run(order, min(steps, 20), never_stop)
        per_step: dict[tuple[str, bool], list[float]] = {v: [] for v in VARIANTS}
        for _ in range(args.rounds):
            for variant, (runner, order, steps) in runs.items():
                count = max(1, min(steps, int(ROUND_SECONDS / max(runner.per_step, 1e-6))))
                totals = runner.run(order, count, never_stop)
                per_step[variant].append(totals.seconds / count)
        reference = statistics.median(per_step[VARIANTS[0]])
        for (precision, xla), times in per_step.items():
            median = statistics.median(times)
            print(
                f"{label:<28} {precision:<15} {'on' if xla else 'off':<4} {median * 1000:>9.3f} "
                f"{reference / median:>7.2f}x"
            )
    print("speedup: float32 with XLA off's median ms/step / the variant's, same process, same rounds")


if __name__ == "__main__":
    main()
