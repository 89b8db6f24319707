"""What a job measured, as files: a training run (run.RunResult), a batch-size sweep (sweep.SweepResult), and the
engine's measurements beside a run's epochs (measurements.Measurements). The history's schemas, checks and every
importer name these formats.
"""

from core.results.run import (
    MAX_CALLS_PER_EPOCH,
    MAX_STRIP,
    STATUSES,
    V2_EPOCH_FIELDS,
    CallPoint,
    EpochInProgress,
    EpochMetrics,
    Learned,
    RunResult,
    elapsed_seconds,
    mean_epoch,
    steady_epoch_seconds,
    utc_now,
)
from core.results.sweep import SWEEP_KIND, SWEEP_SCHEMA_VERSION, SweepPoint, SweepResult, points_frame

__all__ = [
    "MAX_CALLS_PER_EPOCH",
    "MAX_STRIP",
    "STATUSES",
    "SWEEP_KIND",
    "SWEEP_SCHEMA_VERSION",
    "V2_EPOCH_FIELDS",
    "CallPoint",
    "EpochInProgress",
    "EpochMetrics",
    "Learned",
    "RunResult",
    "SweepPoint",
    "SweepResult",
    "points_frame",
    "elapsed_seconds",
    "mean_epoch",
    "steady_epoch_seconds",
    "utc_now",
]
