"""Benchmark: does the why add up? Each model's steady epoch against the sum of its measured parts (core.why).

For the tutorial's softmax (batch 100, SGD 0.1, the multi-step loop), the Quick demo's MLP (128 units, Adam, 30,000
images) in both of the Quick demo's modes (plain model.fit and the multi-step loop) and the CNN (6,000 images), on
this machine's CPU: one run each, then the mean steady epoch, each part (fixed cost per step x steps, the layers'
products at their shapes, memory traffic at the measured bandwidth, other per-sample work, the epoch's set-up), what
they leave unexplained, the bound sentence and the advice, what the set-up's measurements cost (once, after epoch 1)
and what the other batch size's rounds cost (one beside each steady epoch), and a last line per model: why_explained:
MODEL X, X = the parts' sum / the measured epoch. The goal: every X within 0.85-1.15.

The line's two points are the run's own step (its steady epochs') and the other batch size's, so fixed + per-sample
parts are the run's median step by construction; what X can still show is the epochs' steps away from that median
and a line that could not be drawn. --also-own-batch times a throwaway step at the run's own batch too, in the same
rounds, and prints profile_vs_run: MODEL Y, Y = that step / the run's own: how closely a throwaway step (as the
other point is) reproduces the run's, beside the same epochs (the goal: within 0.85-1.15 too).

    .venv/bin/python bench/why.py [--device cpu] [--epochs 4] [--also-own-batch]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import why  # noqa: E402
from core.config import TrainConfig  # noqa: E402
from core.engine import profile  # noqa: E402
from core.engine.training import train  # noqa: E402

TUTORIAL = dict(dataset="fashion_mnist", optimizer="sgd", learning_rate=0.1, batch_size=100)
QUICK = dict(dataset="fashion_mnist", model="mlp", optimizer="adam", learning_rate=0.001, batch_size=100,
             train_subset=30_000)  # fmt: skip
MODELS = {
    "softmax": dict(TUTORIAL, model="softmax"),
    "mlp": dict(QUICK, execution="multi-step-loop"),
    "mlp-fit": dict(QUICK, execution="keras-fit"),
    "cnn": dict(TUTORIAL, model="cnn", optimizer="adam", learning_rate=0.001, train_subset=6_000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=4, help="epochs per run (epoch 1 is warm-up)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--also-own-batch", action="store_true", help="time a throwaway step at the run's batch too")
    args = parser.parse_args()
    profile.ALSO_OWN_BATCH = args.also_own_batch
    lines = []
    for name in args.models.split(","):
        began = time.perf_counter()
        result = train(TrainConfig(**MODELS[name], device=args.device, epochs=args.epochs))
        if result.status != "completed":
            sys.exit(f"{name}: training {result.status}: {result.error}")
        split = why.run_split(result)
        d = result.device
        parts = " ".join(f"{k} {v:.4f}" for k, v in split.parts().items())
        print(f"{name}: epoch {split.epoch:.4f} s | {parts} | unexplained {split.unexplained:+.4f}", flush=True)
        rounds = [round(t * 1e3, 3) for t in d["profile_rounds"]]
        print(
            f"  step {split.step_fixed * 1e6:,.0f} us fixed + {split.step_sample * 1e6:,.2f} us per sample"
            f" (the run's step and batch {d['profile_batch']}'s: {d['profile_batches']} at"
            f" {[round(t * 1e3, 3) for t in d['profile_step_seconds']]} ms; its rounds {rounds} ms);"
            f" products {d.get('shape_gflops') or 0:,.1f} GFLOP/s at these shapes, square peak {d['peak_gflops']:,.0f};"
            f" set-up measurements {d['why_setup_seconds']:.2f} s, rounds {d['why_round_seconds']:.2f} s;"
            f" run {time.perf_counter() - began:.0f} s in all",
            flush=True,
        )
        if (own := d.get("profile_own_batch_seconds")) and (pace := why.step_pace(result)):
            print(f"  a throwaway step at batch {split.batch}: {own * 1e3:.3f} ms, the run's {pace * 1e3:.3f} ms")
            lines.append(f"profile_vs_run: {name} {own / pace:.2f}")
        print(f"  {why.bound_sentence(split)} {why.advice(split)}", flush=True)
        lines.append(f"why_explained: {name} {split.explained:.2f}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
