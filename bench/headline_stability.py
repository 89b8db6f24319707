"""Benchmark: does the Quick demo's headline (core.compare.speedup) repeat from run to run on this machine?

Runs the Quick demo without a GPU REPEATS times the way the dashboard does: one Runner (the server's),
each run in a fresh worker process (core.worker), the two runs of a press one after the other (plain
model.fit as the baseline, then the multi-step loop: core.probe's fit:cpu mode), each stored in a
throwaway history as the page stores it. For each press it prints the headline (ratio of median
steady-state step times, its 90 % bootstrap interval and how many measurements it rests on), each
side's median step, and the ratio of median steady epochs (the reference, measured in the same runs);
then, for each, the spread over the presses: max/min and the largest departure from their median. The
goal is within ±15 %.

    .venv/bin/python bench/headline_stability.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def spread(values: list[float]) -> str:
    """max/min and the largest departure from the median, in percent."""
    mid = statistics.median(values)
    worst = max(abs(v / mid - 1) for v in values)
    return f"max/min {max(values) / min(values):.2f}, within ±{worst * 100:.0f}% of the median {mid:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--epochs", type=int, help="instead of the preset's (an experiment: is a longer demo steadier?)"
    )
    parser.add_argument("--train-subset", type=int, help="instead of the preset's; 0 = the whole training set")
    args = parser.parse_args()

    from core import compare
    from core.config import PRESETS, TrainConfig
    from core.engine.kinds import JOB_KINDS
    from core.history.store import Store, attach
    from core.results import speedup as epoch_speedup
    from core.runner import Runner

    preset = dict(PRESETS["Quick demo"])
    if args.epochs:
        preset["epochs"] = args.epochs
    if args.train_subset is not None:
        preset["train_subset"] = args.train_subset or None
    configs = [TrainConfig(**{**preset, "execution": e}) for e in ("keras-fit", "multi-step-loop")]
    headlines, references = [], []
    with tempfile.TemporaryDirectory() as tmp, Runner(JOB_KINDS) as runner:
        attach(runner, Store(Path(tmp) / "runs.sqlite3"))
        runner.warm()
        for i in range(args.repeats):
            began = time.perf_counter()
            base, other = (runner.wait(run_id).result for run_id in [runner.submit(c) for c in configs])
            for run in (base, other):
                if run is None or run.status != "completed":
                    raise SystemExit(f"repeat {i + 1}: a run did not complete: {run and run.error}")
            found = compare.speedup(base, other)
            if found is None:
                raise SystemExit(f"repeat {i + 1}: fewer than {compare.MIN_CALLS} steady measurements on a side")
            reference = epoch_speedup(base, other)
            headlines.append(found.ratio)
            references.append(reference)
            print(
                f"repeat {i + 1}: headline {found.ratio:.2f}x ({found.low:.2f}-{found.high:.2f} over {found.count}"
                f" measurements) | median step {compare.median_step_seconds(base) * 1e3:.3f} ms plain fit,"
                f" {compare.median_step_seconds(other) * 1e3:.3f} ms multi-step loop"
                f" | median steady epochs {reference:.2f}x | {time.perf_counter() - began:.0f} s from submit",
                flush=True,
            )
    print(f"headline (median step times): {spread(headlines)}")
    print(f"reference (median steady epochs): {spread(references)}")


if __name__ == "__main__":
    main()
