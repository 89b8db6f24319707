"""Hand-built runs shaped exactly like train()'s output, for store and import tests that need no TensorFlow."""

from __future__ import annotations

import random

from core.results import EpochMetrics, RunResult
from core.settings.config import TrainConfig

# As devices.host_info().to_dict() writes it on a GPU server.
SERVER_HOST = {
    "hostname": "gpu-server",
    "platform": "Linux-6.8.0-x86_64-with-glibc2.39",
    "python": "3.12.3",
    "tensorflow": "2.21.0",
    "keras": "3.15.0",
    "cpu_model": "AMD EPYC 9654 96-Core Processor",
    "cpu_cores": 16,
    "logical_cpus": 1,
    "cuda_build": "12.5.1",
    "cudnn_build": "9",
    "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0", "memory_mb": 143771}],
}
SERVER_DEVICE = {
    "requested": "gpu",
    "tf_device": "/GPU:0",
    "name": "NVIDIA H200",
    "label": "GPU",
    "variables_on": "GPU:0",
    "parameters": 7850,
}


def make_epochs(n: int, seed: int = 0) -> list[EpochMetrics]:
    """n epochs with awkward floats (many digits), so exactness is really tested."""
    rng = random.Random(seed)
    epochs = []
    for k in range(1, n + 1):
        seconds = rng.uniform(0.01, 2.0) * (5 if k == 1 else 1)
        epochs.append(
            EpochMetrics(
                epoch=k,
                train_loss=rng.uniform(0.1, 2.5),
                train_accuracy=rng.random(),
                test_loss=rng.uniform(0.1, 2.5),
                test_accuracy=rng.random(),
                train_seconds=seconds,
                eval_seconds=rng.uniform(0.001, 0.5),
                samples_per_second=1000 / seconds,
                warmup=k == 1,
                gflops_per_second=None if k % 2 else rng.uniform(0.1, 50.0),
            )
        )
    return epochs


def make_result(
    run_id: str | None = "abc123def456",
    epochs: int = 3,
    status: str = "completed",
    seed: int = 0,
    started_at: str = "2026-11-30T08:00:00.000+00:00",
) -> RunResult:
    """A run from the GPU server; `epochs` finished of the configured 3 (or more)."""
    config = TrainConfig(dataset="synthetic", train_subset=1000, epochs=max(epochs, 3), batch_size=50, device="gpu")
    return RunResult(
        config=config.to_dict(),
        host=dict(SERVER_HOST),
        device=dict(SERVER_DEVICE),
        status=status,
        error=None,
        epochs=make_epochs(epochs, seed),
        started_at=started_at,
        finished_at="2026-11-30T08:00:09.512+00:00",
        run_id=run_id,
    )
