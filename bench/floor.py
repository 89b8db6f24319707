"""Benchmark: how far the tutorial's model is from its floors, in each execution mode, on this machine.

Softmax regression on Fashion-MNIST, batch 100, SGD 0.1 (the tutorial), trained in each execution
mode in turn, round after round (modes alternate, so machine noise hits them alike). For each mode:
the median steady-state epoch (epochs 2..N of every round), and from the same process the compute
floor (the epoch's training FLOPs at the matmul peak), the memory floor (its bytes at the measured
bandwidth) and the overhead floor (the mode's step floor x steps). A last row runs the multi-step loop with each
Dense kernel as Keras stores it (core.engine.kernels), to show what holding it transposed buys. Last line:
epoch_vs_floor = the fastest mode's epoch / max(compute floor, memory floor).

    .venv/bin/python bench/floor.py [--rounds 2] [--epochs 4] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import why_sentences  # noqa: E402
from core.analysis import why
from core.engine import floor, step  # noqa: E402
from core.engine.training import train  # noqa: E402
from core.settings.config import EXECUTIONS, TrainConfig  # noqa: E402

KEPT = "loop, kernels as stored"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs per mode, alternating modes")
    parser.add_argument("--epochs", type=int, default=4, help="epochs per run (epoch 1 is warm-up)")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    rows = (*EXECUTIONS, KEPT)
    epochs: dict[str, list[float]] = {row: [] for row in rows}
    last = {}
    for _ in range(args.rounds):
        for row in rows:
            mode = "multi-step-loop" if row == KEPT else row
            step.TRANSPOSED_KERNELS = row != KEPT
            config = TrainConfig(
                dataset="fashion_mnist",
                model="softmax",
                device=args.device,
                epochs=args.epochs,
                batch_size=100,
                learning_rate=0.1,
                optimizer="sgd",
                execution=mode,
            )
            result = train(config)
            if result.status != "completed":
                sys.exit(f"{mode}: training {result.status}: {result.error}")
            epochs[row] += [e.train_seconds for e in result.steady_epochs()]
            last[row] = result
    step.TRANSPOSED_KERNELS = True
    limits = next(iter(last.values())).measured.limits
    print(f"device: peak {limits.peak_gflops:.0f} GFLOP/s, bandwidth {limits.bandwidth_gbs:.1f} GB/s")
    print(
        f"{'mode':<26} {'jit':>5} {'epoch s':>8} {'compute':>8} {'shapes':>8} {'memory':>8} {'overhead':>9} "
        f"{'epoch/floor':>11} {'/shapes':>8}"
    )
    ratios = {}
    for row, result in last.items():
        median = statistics.median(epochs[row])
        d, steps = result.device, result.device["steps_per_epoch"]
        floors = why.explain(result).floors  # per step, each measured alone (core.analysis.why)
        compute, memory = steps * floors.peak, steps * floors.memory  # at the square-matmul peak; at the bandwidth
        shaped = steps * floors.products if floors.products else float("nan")  # the products at the model's shapes
        overhead = steps * floor.measure(d["tf_device"], result.config["execution"], d["jit_compile"])
        ratios[row] = median / max(compute, memory)
        print(
            f"{row:<26} {d['jit_compile']!s:>5} {median:8.3f} {compute:8.4f} {shaped:8.4f} {memory:8.4f} "
            f"{overhead:9.4f} {ratios[row]:11.2f} {median / shaped:8.2f}"
        )
    print(f"holding kernels transposed: {ratios[KEPT] / ratios['multi-step-loop']:.2f}x faster epoch")
    fastest = min(ratios, key=ratios.get)
    w = why.explain(last[fastest])
    print(f"fastest: {fastest}; {why_sentences.bound_sentence(w)} {why_sentences.trace_parts(w)}")
    print(f"epoch_vs_floor: {ratios[fastest]:.2f}")


if __name__ == "__main__":
    main()
