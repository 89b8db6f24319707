"""What the history shows of a run: one summary row for the table, and its epochs as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, fields
from typing import Any

from core.results import EpochMetrics, RunResult


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
    epochs_done: int
    epochs_total: int | None
    batch_size: int | None
    final_test_accuracy: float | None
    median_epoch_seconds: float | None  # median of epochs 2..N
    status: str
    host: str | None
    origin: str  # local or imported

    def to_dict(self) -> dict[str, Any]:
        """Plain dict."""
        return asdict(self)


def history_row(result: RunResult, origin: str = "local") -> HistoryRow:
    """The table row for a run: median steady epoch seconds and final accuracy computed by RunResult."""
    config, device = result.config, result.device
    return HistoryRow(
        run_id=result.run_id or "",
        when=result.started_at,
        dataset=config.get("dataset"),
        model=config.get("model"),
        device=device.get("requested") or config.get("device"),
        variables_on=device.get("variables_on"),
        device_name=device.get("name"),
        epochs_done=len(result.epochs),
        epochs_total=config.get("epochs"),
        batch_size=config.get("batch_size"),
        final_test_accuracy=result.final_test_accuracy(),
        median_epoch_seconds=result.median_epoch_seconds(),
        status=result.status,
        host=result.host.get("hostname"),
        origin=origin,
    )


def epochs_csv(result: RunResult) -> str:
    """One CSV line per epoch: device, run_id, then every EpochMetrics field (RunResult.to_frame's columns)."""
    names = [f.name for f in fields(EpochMetrics)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["device", "run_id", *names])
    label = result.device.get("label") or result.config.get("device")
    for m in result.epochs:
        writer.writerow([label, result.run_id, *(getattr(m, n) for n in names)])
    return out.getvalue()
