"""The JSON Schema of a run file's `measured` (schema version 4): core.results.measurements.Measurements.to_dict()."""

from __future__ import annotations

from typing import Any

from core.history.fields import closed, list_of, number, text, whole
from core.results.measurements import GAPS, MEASUREMENTS_VERSION, OPS

MAX_TRIES = 50  # a figure's tries: core.engine.peak takes 5, a round's rounds 5
MAX_STEP_SECONDS = 1e4
MAX_SLICES = 50  # core.engine.trace cuts a window in 10


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """An object field that may be null (a part not measured)."""
    return {**schema, "type": ["object", "null"], "description": "null or " + schema["description"]}


def tries() -> dict[str, Any]:
    return list_of(number(0), MAX_TRIES, f"a list of at most {MAX_TRIES} numbers")


def seconds_by(names: tuple[str, ...]) -> dict[str, Any]:
    return closed({name: number(0, MAX_STEP_SECONDS) for name in names})


LIMITS = closed(
    {
        "peak_gflops": number(0, nullable=True),
        "peak_tries": tries(),
        "peak_dtype": text(nullable=True),
        "peak_source": text(nullable=True),
        "own_peak_gflops": number(0, nullable=True),
        "bandwidth_gbs": number(0, nullable=True),
        "bandwidth_tries": tries(),
    }
)
STEP_TIMING = closed(
    {"batch": whole(1), "rounds": tries(), "seconds": number(0, MAX_STEP_SECONDS, nullable=True)}, required=("batch",)
)
SHAPES = closed(
    {
        "batches": list_of(whole(1), 2, "a list of at most 2 numbers"),
        "sample_seconds": number(0, nullable=True),
        "gflops": number(0, nullable=True),
    }
)
TRACE = closed(
    {
        **{name: whole(1) for name in ("steps", "calls", "batch")},
        **{name: number(0, MAX_STEP_SECONDS) for name in ("step_seconds", "timer_step_seconds")},
        "untraced_step_seconds": number(0, MAX_STEP_SECONDS),
        "ops": seconds_by(OPS),
        "gaps": seconds_by(GAPS),
        "gpu": {"type": "boolean", "description": "true or false"},
        "cost_seconds": number(0, MAX_STEP_SECONDS),
        "file_bytes": whole(0),
        "slices": list_of(seconds_by(OPS + GAPS), MAX_SLICES, f"a list of at most {MAX_SLICES} slices"),
    },
    required=("steps", "calls", "batch", "step_seconds", "timer_step_seconds", "untraced_step_seconds"),
)
MEASURED = nullable(
    closed(
        {
            "version": {"const": MEASUREMENTS_VERSION, "description": str(MEASUREMENTS_VERSION)},
            "limits": nullable(LIMITS),
            "fit": nullable(STEP_TIMING),
            "check": nullable(STEP_TIMING),
            "shapes": nullable(SHAPES),
            "trace": nullable(TRACE),
            "trace_error": text(nullable=True),
            "setup_seconds": number(0, MAX_STEP_SECONDS, nullable=True),
            "round_seconds": number(0, MAX_STEP_SECONDS),
        },
        required=("version",),
    )
)
