"""Benchmark: does the Quick demo's headline (core.analysis.compare.speedup) repeat from run to run on this machine?

Runs the Quick demo without a GPU REPEATS times the way the dashboard does: one Runner (the server's),
each run in a fresh worker process (core.runner.worker), the two runs of a press submitted as one group, so
they take turns epoch by epoch (core.runner.turns; plain model.fit as the baseline, and the multi-step loop:
core.machine.hardware_check's fit:cpu mode), each stored in a throwaway history as the page stores it. With
--also-one-after-another, each press is followed by one whose runs go one after the other (as before
they took turns): the reference, measured in the same session. For each press it prints the headline (the
ratio of steady samples per second, core.analysis.compare.speedup, its 90 % bootstrap interval and how many
measurements it rests on), each side's samples/s, and two references from the same runs: the ratio of the
mean steady epochs the numbers table shows (the headline must agree with it within 10 %) and of the median
steady epochs, and a candidate: the median over the steady epochs of each pair's ratio (the two runs' epoch k,
timed one after the other as they take turns, so a burst of load on the machine that slows one pair moves one of
five ratios, not the sum); then, for each, the spread over the presses: max/min and the largest departure from their
median. The goal is within ±15 %. The load average before and after each press is printed beside it.

    .venv/bin/python bench/headline_stability.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
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
    parser.add_argument("--dump", help="write each press's steady step times (JSON) here, to try other estimators")
    parser.add_argument(
        "--also-one-after-another", action="store_true", help="after each press, one whose runs do not take turns"
    )
    args = parser.parse_args()

    from core.analysis import compare
    from core.engine.kinds import JOB_KINDS
    from core.history.store import Store, attach
    from core.results import steady_epoch_seconds
    from core.runner import Runner
    from core.settings.config import TrainConfig
    from core.settings.presets import PRESETS

    preset = dict(PRESETS["Quick demo"])
    if args.epochs:
        preset["epochs"] = args.epochs
    if args.train_subset is not None:
        preset["train_subset"] = args.train_subset or None
    configs = [TrainConfig(**{**preset, "execution": e}) for e in ("keras-fit", "multi-step-loop")]
    ways = {"taking turns": True} | ({"one after another": False} if args.also_one_after_another else {})
    dumped: list[dict] = []
    headlines: dict[str, list[float]] = {way: [] for way in ways}
    references: dict[str, list[float]] = {way: [] for way in ways}
    medians: dict[str, list[float]] = {way: [] for way in ways}
    paired: dict[str, list[float]] = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as tmp, Runner(JOB_KINDS) as runner:
        attach(runner, Store(Path(tmp) / "runs.sqlite3"))
        runner.warm()
        for i in range(args.repeats):
            for way, together in ways.items():
                began, load = time.perf_counter(), os.getloadavg()[0]
                ids = [f"p{i}{together}-1", f"p{i}{together}-2"]
                if together:
                    runner.submit_group(configs, ids)
                else:
                    for config, run_id in zip(configs, ids, strict=True):
                        runner.submit(config, run_id)
                base, other = (runner.wait(run_id).result for run_id in ids)
                for run in (base, other):
                    if run is None or run.status != "completed":
                        raise SystemExit(f"repeat {i + 1}: a run did not complete: {run and run.error}")
                found = compare.speedup(base, other)
                if found is None:
                    raise SystemExit(f"repeat {i + 1}: fewer than {compare.MIN_CALLS} steady measurements on a side")
                reference = steady_epoch_seconds(base) / steady_epoch_seconds(other)
                median = statistics.median(e.train_seconds for e in base.steady_epochs()) / statistics.median(
                    e.train_seconds for e in other.steady_epochs()
                )
                pairs = [
                    a.train_seconds / b.train_seconds
                    for a, b in zip(base.steady_epochs(), other.steady_epochs(), strict=True)
                ]
                paired[way].append(statistics.median(pairs))
                headlines[way].append(found.ratio)
                dumped.append(
                    {
                        "way": way,
                        **{n: compare.steady_calls(r).seconds for n, r in (("fit", base), ("loop", other))},
                        **{
                            f"{n}_epochs": [e.train_seconds for e in r.steady_epochs()]
                            for n, r in (("fit", base), ("loop", other))
                        },
                    }
                )
                references[way].append(reference)
                medians[way].append(median)
                print(
                    f"repeat {i + 1}, {way}: headline {found.ratio:.2f}x ({found.low:.2f}-{found.high:.2f} over"
                    f" {found.count} measurements) | {compare.throughput(base):,.0f} samples/s plain fit,"
                    f" {compare.throughput(other):,.0f} multi-step loop | mean steady epochs {reference:.2f}x"
                    f" (headline/epochs {found.ratio / reference:.3f}) | median steady epochs {median:.2f}x"
                    f" | paired epochs' median {paired[way][-1]:.2f}x ({', '.join(f'{p:.2f}' for p in pairs)})"
                    f" | {time.perf_counter() - began:.0f} s from submit | load {load:.1f} -> {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    if args.dump:
        Path(args.dump).write_text(json.dumps(dumped))
    for way in ways:
        print(f"{way}: headline (steady samples/s): {spread(headlines[way])}")
        print(f"{way}: reference (mean steady epochs, the table's): {spread(references[way])}")
        print(f"{way}: reference (median steady epochs): {spread(medians[way])}")
        print(f"{way}: candidate (median of the paired epochs' ratios): {spread(paired[way])}")


if __name__ == "__main__":
    main()
