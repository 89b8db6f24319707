"""The History and Scaling views' tables as DataFrames (their columns in the page's words), and achieved speed.

Pure functions of what the store holds (no streamlit, no TensorFlow), tested on hand-made values.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import pandas as pd

from core.analysis import compare, roofline
from core.history.rows import HistoryRow
from core.language import progress
from core.language.i18n import N_, _
from core.results import RunResult, SweepPoint
from ui.run_text import execution_words, short_time

MISSING = "—"  # a table's empty cell (a run stopped before its first epoch has no accuracy), in every language


def share_words(share: float) -> str:
    """A share of peak to two significant figures ('80%', '4.3%', '0.52%'): the peak it divides by is itself
    measured to no better than that."""
    percent = share * 100
    digits = max(0, 1 - math.floor(math.log10(percent))) if percent > 0 else 0
    return f"{percent:.{digits}f}%"


def history_frame(rows: Sequence[HistoryRow]) -> pd.DataFrame:
    """The History table: one row per run, newest first, in the order and words the page shows."""
    return pd.DataFrame(
        {
            N_("When"): [short_time(r.when) for r in rows],
            # Where it ran comes before the details: the host and origin prove a run came from another machine.
            N_("Variables on"): [r.variables_on or (r.device or "?").upper() for r in rows],
            N_("Host"): [r.host or "?" for r in rows],
            N_("Origin"): [_(ORIGINS[r.origin]) if r.origin in ORIGINS else r.origin for r in rows],
            N_("Execution"): [execution_words(r) for r in rows],
            N_("Model"): [r.model for r in rows],
            N_("Dataset"): [r.dataset for r in rows],
            N_("Batch"): [r.batch_size for r in rows],
            N_("Epochs"): [_("{done} of {total}").format(done=r.epochs_done, total=r.epochs_total) for r in rows],
            # In percent, shown with one decimal as every other accuracy on the page (81.7%, not 0.8170 or 81.70%).
            N_("Test accuracy"): [None if r.final_test_accuracy is None else r.final_test_accuracy * 100 for r in rows],
            N_("Steady epoch (s)"): [r.steady_epoch_seconds for r in rows],
            N_("Status"): [progress.status_words(r.status) for r in rows],
            N_("Run id"): [r.run_id for r in rows],
        }
    )


ORIGINS = {"local": N_("local"), "imported": N_("imported")}  # where a stored run came from (core.history)


def join_csv(texts: Sequence[str]) -> str:
    """CSV files with the same header as one: the header once, then every file's rows."""
    if not texts:
        return ""
    header, *_rest = texts[0].splitlines(keepends=True)
    return header + "".join(line for t in texts for line in t.splitlines(keepends=True)[1:])


def achieved(result: RunResult) -> tuple[float | None, float | None]:
    """(GFLOP/s at the run's steady throughput, that as a share of the device's measured matmul peak)."""
    flops, rate = result.device.get("train_flops_per_sample"), compare.throughput(result)
    if not flops or not rate:
        # A file without its FLOPs per sample: the epochs' own figures, as they were recorded.
        rates = [e.gflops_per_second for e in result.steady_epochs() if e.gflops_per_second]
        if not rates:
            return None, None
        gflops = statistics.median(rates)
    else:
        gflops = flops * rate / 1e9
    peak = roofline.limits(result).get("peak_gflops")
    return gflops, (gflops / peak if peak else None)


def sweep_table(points: Sequence[SweepPoint]) -> pd.DataFrame:
    """One row per point: samples/s (median, min, max), ms per step, GFLOP/s and share of peak."""
    return pd.DataFrame(
        {
            N_("Device"): [p.label for p in points],
            N_("Batch"): [p.batch_size for p in points],
            # Whole samples: the repeats' spread is far wider than a fraction of a sample.
            N_("Samples/s"): [_whole(p.samples_per_second) for p in points],
            N_("Min"): [_whole(p.samples_per_second_min) for p in points],
            N_("Max"): [_whole(p.samples_per_second_max) for p in points],
            N_("ms per step"): [p.step_ms for p in points],
            "GFLOP/s": [p.gflops_per_second for p in points],
            N_("Share of peak"): [p.utilisation for p in points],
            N_("Note"): [p.error or "" for p in points],
        }
    )


def _whole(value: float | None) -> float | None:
    return None if value is None else float(round(value))
