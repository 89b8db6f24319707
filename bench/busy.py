"""Benchmark: does the page say when the machine was busy? The Quick demo pressed quiet, then beside a CPU hog.

The no-GPU Quick demo (its preset, 3 epochs) runs on one Runner as the dashboard runs it (the runs of a press as one
group, taking turns), first on a quiet machine, then while a process this bench starts keeps one core busy (a Python
loop), which it ends after. For each press: the headline (core.compare.speedup with its 90% interval), what the runs
recorded of the rest of the machine's CPU (core.busy.others_share: other programs' share of the cores), and whether the
page's warning (core.busy.busy_sentence) would show. Last line: busy_said: quiet Q busy B (1 = the warning shows).

    .venv/bin/python bench/busy.py [--epochs 3]
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
    args = parser.parse_args()
    from core import busy, compare
    from core.config import TrainConfig
    from core.engine.kinds import JOB_KINDS
    from core.history.store import Store, attach
    from core.presets import PRESETS
    from core.runner import Runner

    preset = {**PRESETS["Quick demo"], "epochs": args.epochs}
    configs = [TrainConfig(**{**preset, "execution": e}) for e in ("keras-fit", "multi-step-loop")]
    said = {}
    with tempfile.TemporaryDirectory() as tmp, Runner(JOB_KINDS) as runner:
        attach(runner, Store(Path(tmp) / "runs.sqlite3"))
        runner.warm()
        for name in ("quiet", "busy"):
            other = multiprocessing.Process(target=hog, daemon=True) if name == "busy" else None
            if other:
                other.start()
            try:
                results = press(runner, configs, name)
            finally:
                if other:
                    other.terminate()
                    other.join()
            found = compare.speedup(results[0], results[1])
            share = busy.others_share(results)
            sentence = busy.busy_sentence(results)
            said[name] = int(sentence is not None)
            print(
                f"{name}: headline {found.ratio:.2f}x ({found.low:.2f}-{found.high:.2f}); other programs "
                f"{share:.0%} of the cores; the page says: {sentence or '(nothing)'}",
                flush=True,
            )
    print(f"busy_said: quiet {said['quiet']} busy {said['busy']}")


if __name__ == "__main__":
    main()
