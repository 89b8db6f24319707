"""The skeleton every engine job shares (a training run, a sweep): status, error sentence, placement.

A job is a function that fills in a result; run_job() turns how it ended into the result's
status ("completed", "cancelled" when should_stop() said stop, "failed" with one sentence of
error text) and stamps finished_at. A job never raises to its caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from core.engine import data as datasets
from core.engine import devices
from core.engine.tf_setup import tf
from core.results import utc_now
from core.results.states import State
from core.settings.config import ConfigError

StopCheck = Callable[[], bool]
R = TypeVar("R")

# Errors whose own message is already the one sentence a person should read.
_SAYS_ITSELF = (devices.DeviceError, datasets.DatasetError, ConfigError)


class Cancelled(Exception):
    """should_stop() said stop; the epoch or point in progress is discarded."""


def never_stop() -> bool:
    """The StopCheck of a job nobody can stop."""
    return False


def error_text(err: BaseException, out_of_memory: str) -> str:
    """One sentence for a failed job: our own errors as they are, out of memory as `out_of_memory`, else 'Type: first
    line'."""
    if isinstance(err, _SAYS_ITSELF):
        return str(err)
    if isinstance(err, tf().errors.ResourceExhaustedError):
        return out_of_memory
    first_line = (str(err).strip().splitlines() or [""])[0][:300]
    return f"{type(err).__name__}: {first_line}" if first_line else type(err).__name__


def run_job(result: R, work: Callable[[], Any], out_of_memory: str) -> R:
    """Run work() (which fills in `result`); record completed, cancelled or failed, and finished_at."""
    try:
        work()
        result.status = State.COMPLETED
    except Cancelled:
        result.status = State.CANCELLED
    except Exception as err:  # noqa: BLE001 - a failed job is a result, not a crash of the caller
        result.status = State.FAILED
        result.error = error_text(err, out_of_memory)
    result.finished_at = utc_now()
    return result


def check_placement(model, tf_device: str) -> str:
    """Where the model's variables live ('CPU:0'); DeviceError if that is not `tf_device`.

    Soft placement may quietly move ops to another device; a run must never be reported as run
    on the device asked for when it was not.
    """
    placed = devices.short_device(model.trainable_variables[0].value.device)
    asked = tf_device.strip("/").upper()
    if placed != asked:
        raise devices.DeviceError(f"The model's variables were placed on {placed}, not {asked}.")
    return placed
