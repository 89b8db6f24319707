"""Benchmark: what running through a Ray node adds, on the same machine: a steady-state epoch, and submit to epoch 1.

The tutorial's model (softmax regression, batch 100, SGD 0.1) on Fashion-MNIST (synthetic if it is not
installed), 5 epochs, through core.runner as the page uses it: once in the local worker (the reference,
measured in the same run) and once on a one-node local Ray cluster (ray.cluster_utils.Cluster) with
the device `NODE/cpu`. Prints each path's median steady-state epoch (epochs 2..5) and their ratio
(target: the Ray path adds under 5%), and the seconds from submit to epoch 1 on each. The Ray path's
first epoch includes starting the actor's process and its TensorFlow import; the local worker's was
imported before the run was submitted (Runner.warm), as a person pressing Run finds it.

    .venv/bin/python bench/ray_overhead.py [--epochs 5] [--dataset fashion_mnist] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.engine import data  # noqa: E402
from core.engine.kinds import JOB_KINDS  # noqa: E402
from core.runner import Runner  # noqa: E402
from core.settings.config import TrainConfig  # noqa: E402


def timed_run(runner: Runner, config: TrainConfig) -> tuple[float, float]:
    """(seconds from submit to epoch 1's metrics here, median steady-state training seconds per epoch)."""
    began = time.perf_counter()
    run_id = runner.submit(config)
    first = None
    while (status := runner.status(run_id)).state in ("queued", "running"):
        if first is None and status.done >= 1:
            first = time.perf_counter() - began
        time.sleep(0.01)
    status = runner.wait(run_id)
    if status.state != "completed":
        raise SystemExit(f"{config.device}: the run ended {status.state}: {status.error}")
    return first or time.perf_counter() - began, statistics.median(
        e.train_seconds for e in status.result.steady_epochs()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--dataset", default="fashion_mnist")
    parser.add_argument("--repeats", type=int, default=3, help="runs on each path, alternating (one is noise)")
    args = parser.parse_args()
    dataset = args.dataset if data.availability(args.dataset).available else "synthetic"

    import ray
    from ray.cluster_utils import Cluster

    from core.cluster import connect, nodes

    # A one-node cluster in local processes, as `ray start --head` would run it; this process joins as the page does.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "node_name": "bench-node"})
    try:
        connect.connect(cluster.address)
        node = nodes.alive()[0].name
        settings = dict(dataset=dataset, model="softmax", batch_size=100, learning_rate=0.1, epochs=args.epochs)
        local, remote = TrainConfig(**settings, device="cpu"), TrainConfig(**settings, device=f"{node}/cpu")
        print(f"{dataset}, softmax, batch 100, {args.epochs} epochs; Ray {ray.__version__}, node {node!r}")
        figures: dict[str, list[tuple[float, float]]] = {"local worker": [], "Ray node": []}
        with Runner(JOB_KINDS) as runner:
            for _ in range(args.repeats):
                for name, config in (("local worker", local), ("Ray node", remote)):
                    # The next local worker imports TensorFlow after each local run: let it finish first,
                    # so neither path is timed while it competes for the CPU.
                    runner.warm()
                    figures[name].append(timed_run(runner, config))
        for name, runs in figures.items():
            first = statistics.median(f for f, _ in runs)
            epoch = statistics.median(e for _, e in runs)
            print(f"{name:<13} submit to epoch 1 {first:6.2f} s   median steady-state epoch {epoch:.3f} s")
        ratio = statistics.median(e for _, e in figures["Ray node"]) / statistics.median(
            e for _, e in figures["local worker"]
        )
        print(f"Ray node / local worker, steady-state epoch: {ratio:.3f} (target under 1.05)")
    finally:
        connect.disconnect()
        cluster.shutdown()


if __name__ == "__main__":
    main()
