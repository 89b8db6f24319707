"""Benchmark: does the Quick demo's headline (core.compare.speedup) repeat from run to run on this machine?

Runs the Quick demo's two runs without a GPU (core.config.PRESETS["Quick demo"], plain model.fit as the
baseline, then the multi-step loop, as core.probe's fit:cpu mode does) REPEATS times, each pair in a
fresh process: a dashboard session, and each of the runner's worker processes, starts TensorFlow anew,
so run-to-run variation includes what a new process brings (thread pools, allocator, tracing caches).
For each repeat it prints the headline (ratio of median steady-state step times, its 90 % bootstrap
interval and how many calls it rests on) next to the ratio the old headline used (median steady epochs,
the reference measured in the same processes); then, for each, the spread: max/min and the largest
departure from the median of the repeats. The goal is within ±15 %.

    .venv/bin/python bench/headline_stability.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_pair() -> dict[str, float]:
    """Both runs in this process; the headline and the epoch-median ratio as numbers."""
    from core import compare
    from core.config import PRESETS, TrainConfig
    from core.engine.training import train
    from core.results import speedup as epoch_speedup

    base, other = (
        train(TrainConfig(**{**PRESETS["Quick demo"], "execution": e})) for e in ("keras-fit", "multi-step-loop")
    )
    for run in (base, other):
        if run.status != "completed":
            raise SystemExit(f"{run.config['execution']} {run.status}: {run.error}")
    found = compare.speedup(base, other)
    return {
        "ratio": found.ratio if found else float("nan"),
        "low": found.low if found else float("nan"),
        "high": found.high if found else float("nan"),
        "calls": found.count if found else 0,
        "epoch_ratio": epoch_speedup(base, other) or float("nan"),
        "seconds": sum(e.train_seconds + e.eval_seconds for r in (base, other) for e in r.epochs),
    }


def spread(values: list[float]) -> str:
    """max/min and the largest departure from the median, in percent."""
    mid = statistics.median(values)
    worst = max(abs(v / mid - 1) for v in values)
    return f"max/min {max(values) / min(values):.2f}, within ±{worst * 100:.0f}% of the median {mid:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process: one pair, as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_pair()))
        return
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    rows = []
    for i in range(args.repeats):
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--one"], env=env, capture_output=True, text=True, check=False, cwd=ROOT
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:] or done.stdout[-2000:])
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"repeat {i + 1}: headline {row['ratio']:.2f}x ({row['low']:.2f}-{row['high']:.2f} over {row['calls']} calls)"
            f" | median steady epochs {row['epoch_ratio']:.2f}x | {row['seconds']:.1f} s training+eval,"
            f" {time.perf_counter() - began:.0f} s with start-up",
            flush=True,
        )
    print(f"headline (median step times): {spread([r['ratio'] for r in rows])}")
    print(f"reference (median steady epochs): {spread([r['epoch_ratio'] for r in rows])}")


if __name__ == "__main__":
    main()
