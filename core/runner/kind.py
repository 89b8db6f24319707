"""A job kind: what a Runner is given for one config type (core.engine.kinds.JOB_KINDS; the runner imports no engine).

`run` crosses to a worker process by reference, so it must be a module-level function (or a class's static one):
run(config, on_item(item, result), should_stop() -> bool, run_id[, take_turn]) -> result. take_turn is passed
only to the runs of a group taking turns (core.runner.turns). The other three run where they are named below;
`preload` (optional) names the modules a zygote may import before it forks a worker (core.spawn.zygote): they
must run no op and start no thread at import.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class JobKind(Protocol):
    """The contract (a class of static methods satisfies it: core.engine.kinds.Training)."""

    run: Callable[..., Any]  # in the worker process

    def admit(self, config: Any) -> None:
        """In the server, at submit: raise (ConfigError) to refuse a job before it is queued (it cannot fit)."""

    def warm_up(self) -> None:
        """In a fresh worker, before it says Ready: what a first job would wait for (import TensorFlow)."""

    def fits_together(self, configs: list[Any], waiting: int = 1) -> bool:
        """In the server: whether a group's runs fit in memory at once (they take turns), else one after another."""


def _admit_all(config: Any) -> None:
    """A plain job refuses nothing."""


def _nothing() -> None:
    """A plain job needs no warm-up."""


def _alone(configs: list[Any], waiting: int = 1) -> bool:
    """A plain job's group runs one after another."""
    return False


@dataclass(frozen=True)
class Kind:
    """A JobKind from functions: a bare job function is taken as Kind(job) (it admits all, warms nothing, runs
    alone)."""

    run: Callable[..., Any]
    admit: Callable[[Any], None] = _admit_all
    warm_up: Callable[[], None] = _nothing
    fits_together: Callable[..., bool] = _alone
    preload: tuple[str, ...] = ()


def as_job_kind(config_type: type, given: JobKind | Callable[..., Any]) -> JobKind:
    """`given` as a JobKind; TypeError unless its job can cross to a worker process by name."""
    kind = given if isinstance(given, JobKind) else Kind(given)
    for crosses in (kind.run, kind.warm_up):
        try:
            pickle.dumps(crosses)
        except (pickle.PicklingError, AttributeError, TypeError):
            raise TypeError(
                f"The job for {config_type.__name__} must be a module-level function,"
                " so a worker process can import it."
            ) from None
    return kind
