"""Benchmark: training throughput, GFLOP/s and share of the matmul peak across batch sizes on this CPU.

The tutorial's softmax regression and the MLP (at two widths, to show how model size moves
the answer), each swept over batch sizes with core.engine.sweep: a fresh model per point, a warm-up,
then the median (and range) of timed repeats of about 0.5 s each, on synthetic data already on
the device. Utilisation = achieved training GFLOP/s / the CPU's float32 matmul peak, measured
once before the sweeps (and again after, to show drift). On a shared machine every figure moves
with whatever else runs there; the min-max column shows by how much.

    .venv/bin/python bench/sweep_cpu.py [--batch-sizes 16,64,256,1024,4096] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.engine import peak  # noqa: E402
from core.engine.sweep import run_sweep  # noqa: E402
from core.settings.config import DEFAULT_BATCH_SIZES, SweepConfig  # noqa: E402

MODELS = (("softmax", 128), ("mlp", 128), ("mlp", 1024))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCH_SIZES)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    results = []
    for model, hidden in MODELS:
        config = SweepConfig(
            devices=(args.device,), model=model, hidden_units=hidden, batch_sizes=args.batch_sizes, repeats=args.repeats
        )
        result = run_sweep(config)
        if result.status != "completed":
            sys.exit(f"error: {result.error or result.status}")
        results.append(result)

    info, host = results[0].devices[config.devices[0]], results[0].host
    # Measured again now: if the two differ, something else was using the machine meanwhile.
    again = peak.benchmark(info["tf_device"]).gflops
    print(f"{info['label']}: {info['name']}, {host['cpu_cores']} cores, TensorFlow {host['tensorflow']}")
    print(
        f"matmul peak: {info['peak_gflops']:,.1f} GFLOP/s before the sweeps, {again:,.1f} after "
        f"(float32 {info['peak_matrix_size']}x{info['peak_matrix_size']}, median of {peak.TRIES} tries)"
    )
    print()
    head = (
        f"| {'model':<10} | {'train FLOPs/sample':>18} | {'batch':>5} | {'samples/s (median)':>18}"
        f" | {'min-max':>19} | {'GFLOP/s':>7} | {'of peak':>7} |"
    )
    print(head)
    print("|" + "|".join("-" * (len(cell)) for cell in head.split("|")[1:-1]) + "|")
    for result in results:
        name = result.model["name"] + (f" {result.model['hidden_units']}" if result.model["name"] == "mlp" else "")
        for p in result.points:
            spread = f"{p.samples_per_second_min:,.0f}-{p.samples_per_second_max:,.0f}"
            print(
                f"| {name:<10} | {result.model['train_flops_per_sample']:>18,} | {p.batch_size:>5} | "
                f"{p.samples_per_second:>18,.0f} | {spread:>19} | {p.gflops_per_second:>7.1f} | {p.utilisation:>7.1%} |"
            )


if __name__ == "__main__":
    main()
