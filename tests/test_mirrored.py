"""MirroredStrategy (cpu:all) over TFDASH_LOGICAL_CPUS=2 logical CPUs: it trains, records its replicas, and learns
what one device learns at the same global batch (batch size x replicas)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
import json
from core.settings.config import TrainConfig
from core.engine.training import train
common = dict(dataset="synthetic", train_subset=1000, epochs=2, execution="keras-fit")
# The device's limits (measured after epoch 1) are not what this checks: measurements=False.
mirrored = train(TrainConfig(**common, device="cpu:all", batch_size=50), measurements=False)
single = train(TrainConfig(**common, device="cpu", batch_size=100), measurements=False)  # the same global batch
print(json.dumps([r.to_dict() for r in (mirrored, single)]))
"""


def test_cpu_all_trains_with_mirrored_strategy_over_two_logical_cpus():
    env = {**os.environ, "TFDASH_LOGICAL_CPUS": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-800:]
    mirrored, single = json.loads(done.stdout.strip().splitlines()[-1])
    assert mirrored["status"] == "completed", mirrored["error"]
    assert mirrored["device"]["replicas"] == 2 and mirrored["device"]["global_batch_size"] == 100
    assert single["device"]["replicas"] == 1 and mirrored["device"]["steps_per_epoch"] == 1000 // 100
    assert mirrored["config"]["device"] == "cpu:all" and mirrored["device"]["jit_compile"] is False
    # Same batches in the same order, the gradient averaged over the replicas: the same accuracy band.
    ours, theirs = mirrored["epochs"][-1]["test_accuracy"], single["epochs"][-1]["test_accuracy"]
    assert ours > 0.15 and abs(ours - theirs) < 0.02
    # The page says what the second device buys, and at what global batch.
    from core.results import RunResult
    from ui.comparison import mirrored as said

    assert said(RunResult.from_dict(mirrored)) == "2 replicas: global batch 100 (50 x 2)"  # its MirroredStrategy row
    assert said(RunResult.from_dict(single)) == "—"
