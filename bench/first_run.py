"""Benchmark: seconds from submit to epoch 1 for the first run after a Runner is made, against a second run.

The tutorial's model (softmax regression, batch 100, SGD 0.1) on Fashion-MNIST (synthetic if it is not
installed), a few epochs, through core.runner as the page uses it (its warm workers: core.engine.memory.
warm_workers). The Runner starts its workers at once, and they import TensorFlow; a person takes longer
than that to press Run, so the first and second runs are submitted once they are ready (Runner.warm).
Then a run pressed again at once, as the page allows it: the moment Runner.ready() says its workers wait
again (the page offers Run then), and how long after the previous run's end that was; and, for
reference, one submitted the very moment the previous run ended (as a Run queued from another page is),
which waits for the fresh workers' import. Then the Quick demo (plain fit vs the multi-step loop, taking
turns) pressed once the page offers Run: seconds to its first point the page can draw (a call of epoch 1),
and to both done. Also prints this process's RSS before and after: TensorFlow lives in the workers.

    .venv/bin/python bench/first_run.py [--epochs 3] [--dataset fashion_mnist]
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.engine import data, memory  # noqa: E402
from core.engine.kinds import JOB_KINDS  # noqa: E402
from core.runner import Runner  # noqa: E402
from core.settings.config import TrainConfig  # noqa: E402
from core.settings.presets import PRESETS  # noqa: E402


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


def to_first_point(runner: Runner, configs: list[TrainConfig]) -> tuple[float, float]:
    """A group's (seconds from submit to the first point the page can draw, to both runs done).

    A point the page can draw: a call of the step loop in an epoch still training, or a finished epoch.
    """
    began = time.perf_counter()
    ids = runner.submit_group(configs, [f"{uuid.uuid4().hex[:8]}-{i}" for i in (1, 2)])
    first = None
    while first is None:
        for status in (runner.status(i) for i in ids):
            if status.done or (status.in_progress is not None and status.in_progress.calls):
                first = time.perf_counter() - began
            elif status.state not in ("queued", "running"):
                raise SystemExit(f"a Quick demo run ended early: {status.error}")
        time.sleep(0.005)
    finals = [runner.wait(i) for i in ids]
    if any(f.state != "completed" for f in finals):
        raise SystemExit(f"a Quick demo run did not complete: {[f.error for f in finals]}")
    return first, time.perf_counter() - began


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
    runner = Runner(JOB_KINDS, warm=memory.warm_workers())
    try:
        runner.warm()
        ready = time.perf_counter() - began
        first = to_first_epoch(runner, config)
        runner.warm()
        second = to_first_epoch(runner, config)
        offered = until_ready(runner)  # Run pressed the moment the page offers it again
        back_to_back = to_first_epoch(runner, config)
        at_end = to_first_epoch(runner, config)  # no wait at all: it waits for the next workers' import
        until_ready(runner)
        # The Quick demo without a GPU, as the page submits it: plain fit and the multi-step loop, taking turns.
        demo = [TrainConfig(**{**PRESETS["Quick demo"], "execution": e}) for e in ("keras-fit", "multi-step-loop")]
        point, demo_done = to_first_point(runner, demo)
        after = rss_mb()
    finally:
        runner.close()

    print(
        f"model softmax, {dataset}, batch 100, {args.epochs} epochs, on the CPU; {memory.warm_workers()} warm workers"
    )
    print(f"workers ready (TensorFlow imported) {ready:.1f} s after the Runner was made")
    print(f"submit -> epoch 1, first run:  {first:.2f} s")
    print(f"submit -> epoch 1, second run: {second:.2f} s")
    print(
        f"submit -> epoch 1, Run pressed again the moment the page offers it ({offered:.1f} s after the last run"
        f" ended): {back_to_back:.2f} s"
    )
    print(f"submit -> epoch 1, submitted the moment the last run ended (waits for the import): {at_end:.2f} s")
    print(
        f"Quick demo (plain fit vs multi-step loop): submit -> first point to draw {point:.2f} s,"
        f" both done {demo_done:.1f} s"
    )
    print(f"this process's RSS: {before:.0f} MB before, {after:.0f} MB after")
    print(f"first_run_vs_second_run: {first / second:.2f}x")
    print(f"back_to_back_vs_second_run: {back_to_back / second:.2f}x")
    print(f"submitted_at_end_vs_second_run: {at_end / second:.2f}x")


def until_ready(runner: Runner) -> float:
    """Seconds until the runner's workers wait ready again (Runner.ready: when the page offers Run)."""
    began = time.perf_counter()
    while not runner.ready():
        time.sleep(0.01)
    return time.perf_counter() - began


if __name__ == "__main__":
    main()
