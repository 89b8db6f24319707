"""What a worker sends per epoch: the whole run (as it was) against the run without its epochs (core.runner.deltas).

No TensorFlow: a run of EPOCHS epochs shaped like the tutorial's (about 30 calls an epoch, the softmax model's
learned templates on the last epoch), pickled as each message would be. Prints bytes per message at a few epochs,
and the totals' ratio whole / sent once (the whole run's grows with the square of the epochs). Bytes, not seconds:
the same on any machine, so it needs no lock.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.results import CallPoint, EpochMetrics, Learned, RunResult  # noqa: E402
from core.runner.deltas import grown, head  # noqa: E402
from core.runner.protocol import Item  # noqa: E402

EPOCHS = 50


def epoch(n: int) -> EpochMetrics:
    calls = [CallPoint(n + i / 30, 100 * i, 20, 0.2, 0.5, 0.8) for i in range(30)]
    learned = Learned(list(range(16)), [1] * 16, [1] * 16, [[128] * 784 for _ in range(10)], 0.3)
    return EpochMetrics(n, 0.5, 0.8, 0.5, 0.8, 2.0, 0.2, 30000.0, n == 1, 1.0, calls, learned)


def main() -> None:
    """Print bytes per epoch message, whole run vs sent once, and the totals' ratio."""
    run = RunResult({"model": "softmax"}, {"hostname": "here"}, {"label": "CPU", "peak_gflops": 100.0})
    parent: list = []
    whole_total = once_total = 0
    for n in range(1, EPOCHS + 1):
        metrics = epoch(n)
        grown(run, run.epochs, metrics)  # the worker's run, as core.engine.training keeps it
        whole = len(pickle.dumps(Item(metrics, run)))
        once = len(pickle.dumps(Item(metrics, head(run))))
        grown(pickle.loads(pickle.dumps(head(run))), parent, metrics)  # the parent's run grows by the epoch
        whole_total, once_total = whole_total + whole, once_total + once
        if n in (1, 10, EPOCHS):
            print(f"epoch {n:3d}: whole run {whole:9,d} bytes, sent once {once:7,d} bytes")
    assert [e.epoch for e in parent] == list(range(1, EPOCHS + 1))
    print(f"total over {EPOCHS} epochs: whole {whole_total:,d} bytes, sent once {once_total:,d} bytes")
    print(f"whole_vs_sent_once: {whole_total / once_total:.1f}")


if __name__ == "__main__":
    main()
