"""Benchmark: seconds from submit to epoch 1 for the first run after a Runner is made, against a second run.

The tutorial's model (softmax regression, batch 100, SGD 0.1) on Fashion-MNIST (synthetic if it is not
installed), a few epochs, through core.runner as the page uses it. The Runner starts a worker process
at once that imports TensorFlow; a person takes longer than that to press Run, so each run here is
submitted once that worker is ready (Runner.warm). The reference, measured in the same run: a third
run submitted the moment the second finished, which waits for its fresh worker's import, as the
first Run after the server started used to (11.1 s vs 2.2 s). Also prints this process's RSS before
and after the runs: TensorFlow's memory lives and dies with the workers.

    .venv/bin/python bench/first_run.py [--epochs 3] [--dataset fashion_mnist]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import TrainConfig  # noqa: E402
from core.engine import data  # noqa: E402
from core.engine.kinds import JOB_KINDS  # noqa: E402
from core.runner import Runner  # noqa: E402


def rss_mb() -> float:
    """This process's resident memory in MB (/proc/self/status)."""
    line = next(x for x in open("/proc/self/status") if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def to_first_epoch(runner: Runner, config: TrainConfig) -> float:
    """Seconds from submit until epoch 1's metrics are here; then waits for the run to end."""
    began = time.perf_counter()
    run_id = runner.submit(config)
    while runner.status(run_id).done < 1:
        if runner.status(run_id).state not in ("queued", "running"):
            raise SystemExit(f"the run ended early: {runner.status(run_id).error}")
        time.sleep(0.005)
    seconds = time.perf_counter() - began
    final = runner.wait(run_id)
    if final.state != "completed":
        raise SystemExit(f"the run ended {final.state}: {final.error}")
    return seconds


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--dataset", default="fashion_mnist")
    args = parser.parse_args()
    dataset = args.dataset if data.availability(args.dataset).available else "synthetic"
    config = TrainConfig(dataset=dataset, model="softmax", batch_size=100, learning_rate=0.1, epochs=args.epochs)

    before = rss_mb()
    began = time.perf_counter()
    runner = Runner(JOB_KINDS)
    try:
        runner.warm()
        ready = time.perf_counter() - began
        first = to_first_epoch(runner, config)
        runner.warm()
        second = to_first_epoch(runner, config)
        back_to_back = to_first_epoch(runner, config)  # no warm(): it waits for the next worker's import
        after = rss_mb()
    finally:
        runner.close()

    print(f"model softmax, {dataset}, batch 100, {args.epochs} epochs, on the CPU")
    print(f"worker ready (TensorFlow imported) {ready:.1f} s after the Runner was made")
    print(f"submit -> epoch 1, first run:  {first:.2f} s")
    print(f"submit -> epoch 1, second run: {second:.2f} s")
    print(f"submit -> epoch 1, a run submitted as the previous one ended (waits for the import): {back_to_back:.2f} s")
    print(f"this process's RSS: {before:.0f} MB before, {after:.0f} MB after")
    print(f"first_run_vs_second_run: {first / second:.2f}x")
    print(f"back_to_back_vs_second_run: {back_to_back / second:.2f}x")


if __name__ == "__main__":
    main()
