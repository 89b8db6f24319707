"""Benchmark: does the page say when the machine was busy? The Quick demo pressed quiet, then beside a CPU hog.

The no-GPU Quick demo (its preset, 3 epochs) runs on one Runner as the dashboard runs it (the runs of a press as one
group, taking turns), first on a quiet machine, then while a process this bench starts keeps one core busy (a Python
loop), which it ends after. For each press: the headline (core.analysis.compare.speedup with its 90% interval), what the
runs recorded of the rest of the machine's CPU (core.machine.busy.others_share: other programs' share of the cores), and
whether the page's warning (core.machine.busy.busy_sentence) would show, and each run's verdict (core.analysis.why: its
bound, or no single bound). With --presses N, N quiet presses then N busy ones, and each condition's spread of headlines
over its presses (what the headline's own interval, over one press's epochs and calls, does not cover). The runs are the
page's (core.settings.device_modes' fit:cpu mode: plain fit, the multi-step loop, then XLA on it); the headline is first
against last. Last line: busy_said: quiet Q busy B (1 = the warning shows, on every press of that condition).

    .venv/bin/python bench/busy.py [--epochs 3] [--presses 1]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def hog() -> None:
    """One core kept busy until this process is ended."""
    while True:
        pass


def press(runner, configs, name: str):
    """The demo's runs as one group; the finished results."""
    ids = [f"{name}-{i}" for i in range(1, len(configs) + 1)]
    runner.submit_group(configs, ids)
    results = [runner.wait(run_id).result for run_id in ids]
    for r in results:
        if r is None or r.status != "completed":
            raise SystemExit(f"{name}: a run did not complete: {r and r.error}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--presses", type=int, default=1, help="presses per condition, quiet then busy")
    args = parser.parse_args()
    from core.analysis import compare, why
    from core.engine.kinds import JOB_KINDS
    from core.history.store import Store, attach
    from core.machine import busy
    from core.runner import Runner
    from core.settings.config import TrainConfig
    from core.settings.device_modes import _fit_runs
    from core.settings.presets import PRESETS

    preset = {**PRESETS["Quick demo"], "epochs": args.epochs}
    configs = [TrainConfig(**{**preset, **run}) for run in _fit_runs("cpu")]
    said: dict[str, list[int]] = {"quiet": [], "busy": []}
    headlines: dict[str, list[float]] = {"quiet": [], "busy": []}
    with tempfile.TemporaryDirectory() as tmp, Runner(JOB_KINDS) as runner:
        attach(runner, Store(Path(tmp) / "runs.sqlite3"))
        runner.warm()
        for name in [c for c in ("quiet", "busy") for _ in range(args.presses)]:
            other = multiprocessing.Process(target=hog, daemon=True) if name == "busy" else None
            if other:
                other.start()
            try:
                results = press(runner, configs, name)
            finally:
                if other:
                    other.terminate()
                    other.join()
            found = compare.speedup(results[0], results[-1])
            share = busy.others_share(results)
            sentence = busy.busy_sentence(results)
            said[name].append(int(sentence is not None))
            headlines[name].append(found.ratio)
            print(
                f"{name}: headline {found.ratio:.2f}x ({found.low:.2f}-{found.high:.2f});"
                f" verdicts {verdicts(why, results)};"
                f" other programs {share:.0%} of the cores; the page says: {sentence or '(nothing)'}",
                flush=True,
            )
    for name, found in headlines.items():
        print(
            f"{name}: headlines over {len(found)} presses {min(found):.2f}x-{max(found):.2f}x,"
            f" max/min {max(found) / min(found):.2f}"
        )
    print(f"busy_said: quiet {min(said['quiet'])} busy {min(said['busy'])}")


def verdicts(why, results) -> str:
    """Each run's bound as the page says it: 'compute', 'overhead', 'memory' or 'no single bound' (no trace: '-')."""
    found = [why.explain(r) for r in results]
    return ", ".join("-" if w is None or w.trace is None else (w.bound or "no single bound") for w in found)


if __name__ == "__main__":
    main()
