"""What the history shows of a run or a sweep: one summary row for its table, and its epochs or points as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from core.language.i18n import _
from core.results import (
    SWEEP_KIND,
    RunResult,
    SweepPoint,
    SweepResult,
    crossover,
    elapsed_seconds,
    steady_epoch_seconds,
)
from core.results.run import EPOCH_COLUMNS
from core.settings.config import canonical_execution


@dataclass(frozen=True)
class HistoryRow:
    """One line of the history table; to_dict() gives plain values for a DataFrame or JSON."""

    run_id: str
    when: str | None  # started_at, ISO-8601 (UTC for runs made here); None if the file had none
    dataset: str | None
    model: str | None
    device: str | None  # requested: cpu, gpu, gpu:1, ...
    variables_on: str | None  # where the model's variables lived: CPU:0, GPU:0
    device_name: str | None  # CPU model or GPU name
    execution: str | None  # keras-fit, keras-fit-spe or multi-step-loop (an old file's fast/keras-default, renamed)
    epochs_done: int
    epochs_total: int | None
    batch_size: int | None
    final_test_accuracy: float | None
    steady_epoch_seconds: float | None  # core.analysis.compare's steady epoch: the mean of epochs 2..N
    status: str
    host: str | None
    origin: str  # local or imported

    kind: ClassVar[str] = "train"

    def to_dict(self) -> dict[str, Any]:
        """Plain dict."""
        return asdict(self)


def history_row(result: RunResult, origin: str = "local") -> HistoryRow:
    """The table row for a run: its steady epoch (core.analysis.compare) and final accuracy."""
    config, device = result.config, result.device
    return HistoryRow(
        run_id=result.run_id or "",
        when=result.started_at,
        dataset=config.get("dataset"),
        model=config.get("model"),
        device=device.get("requested") or config.get("device"),
        variables_on=device.get("variables_on"),
        device_name=device.get("name"),
        execution=execution_name(config.get("execution")),
        epochs_done=len(result.epochs),
        epochs_total=config.get("epochs"),
        batch_size=config.get("batch_size"),
        final_test_accuracy=result.final_test_accuracy(),
        steady_epoch_seconds=steady_epoch_seconds(result),
        status=result.status,
        host=result.host.get("hostname"),
        origin=origin,
    )


def execution_name(value: Any) -> str | None:
    """The execution mode's current name (an old file's 'fast' reads 'multi-step-loop'); None if there is none."""
    return canonical_execution(value) if isinstance(value, str) else None


def epochs_csv(result: RunResult) -> str:
    """One CSV line per epoch: device, execution, run_id, the epoch's own figures (EPOCH_COLUMNS) and
    elapsed_train_seconds (training seconds summed from epoch 1: time to any test accuracy reads off it)."""
    names = list(EPOCH_COLUMNS)  # neither the per-call lists nor the machine's other load are CSV cells
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["device", "execution", "run_id", *names, "elapsed_train_seconds"])
    label = result.device.get("label") or result.config.get("device")
    execution = execution_name(result.config.get("execution"))
    for m, elapsed in zip(result.epochs, elapsed_seconds(result), strict=True):
        writer.writerow([label, execution, result.run_id, *(getattr(m, n) for n in names), round(elapsed, 6)])
    return out.getvalue()


# -- sweeps ------------------------------------------------------------------------------------
WIDTH_MODELS = ("mlp",)  # models whose size hidden_units sets (core.engine.models); the others ignore it


@dataclass(frozen=True)
class SweepRow:
    """One line of the sweeps table; to_dict() gives plain values (lists, not tuples) for a DataFrame or JSON."""

    run_id: str
    when: str | None  # started_at, ISO-8601
    model: str | None
    hidden_units: int | None  # the MLP's width; None for a model that has no hidden layer to size
    devices: tuple[str, ...]  # as configured: cpu, gpu, gpu:1
    batch_sizes: tuple[int, ...]
    points_measured: int  # points with a throughput (a failed point, e.g. out of memory, has none)
    points_total: int  # devices x batch sizes
    status: str
    host: str | None
    crossover: str  # "GPU faster from batch 256.", from the stored points
    error: str | None
    origin: str  # local or imported

    kind: ClassVar[str] = SWEEP_KIND

    def to_dict(self) -> dict[str, Any]:
        """Plain dict."""
        return {**asdict(self), "devices": list(self.devices), "batch_sizes": list(self.batch_sizes)}


def unreadable_sweep_row(run_id: str, started_at: str | None, status: str, origin: str, err: Exception) -> SweepRow:
    """The line of a stored sweep that cannot be read: listed with the reason, so nothing stored is hidden."""
    error = _("The stored sweep cannot be read: {problem}").format(problem=err)
    return SweepRow(run_id, started_at, None, None, (), (), 0, 0, status, None, "", error, origin)


def sweep_row(result: SweepResult, origin: str = "local") -> SweepRow:
    """The table row for a sweep: what it measured, on what, and where the devices cross."""
    config = result.config
    devices, batch_sizes = tuple(config.get("devices", ())), tuple(config.get("batch_sizes", ()))
    return SweepRow(
        run_id=result.run_id or "",
        when=result.started_at,
        model=config.get("model"),
        hidden_units=config.get("hidden_units") if config.get("model") in WIDTH_MODELS else None,
        devices=devices,
        batch_sizes=batch_sizes,
        points_measured=sum(1 for p in result.points if p.samples_per_second is not None),
        points_total=len(devices) * len(batch_sizes),
        status=result.status,
        host=result.host.get("hostname"),
        crossover=crossover.crossover_sentence(result.points),
        error=result.error,
        origin=origin,
    )


def points_csv(result: SweepResult) -> str:
    """One CSV line per point: device, run_id, then every SweepPoint field; the repeats joined by ';'."""
    names = [f.name for f in fields(SweepPoint) if f.name != "device"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["device", "run_id", *names])
    for p in result.points:
        values = (getattr(p, n) for n in names)
        writer.writerow(
            [p.label, result.run_id, *(";".join(map(repr, v)) if isinstance(v, tuple) else v for v in values)]
        )
    return out.getvalue()


def result_csv(result: RunResult | SweepResult) -> str:
    """A run's epochs or a sweep's points as CSV."""
    return epochs_csv(result) if isinstance(result, RunResult) else points_csv(result)
