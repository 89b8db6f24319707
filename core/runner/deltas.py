"""A run sent once: with each new epoch (or sweep point) a worker sends the result without its items, and the
parent's copy grows by the new one. Sent whole, each epoch's message re-pickled every epoch before it.

Registered by result type (the runner imports no engine, only core.results); a result of another type (a plain
job kind's) is sent whole with each item, as it comes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from core.results import EpochMetrics, RunResult, SweepResult


def _add_epoch(epochs: list[EpochMetrics], metrics: EpochMetrics) -> None:
    # As core.engine.training keeps them: only the last epoch holds what the model learned, so a file stays small.
    if epochs:
        epochs[-1] = replace(epochs[-1], learned=None)
    epochs.append(metrics)


# result type -> (the field that grows item by item, how an item joins it)
GROWS: dict[type, tuple[str, Callable[[list, Any], None]]] = {
    RunResult: ("epochs", _add_epoch),
    SweepResult: ("points", list.append),
}


# Fields a worker leaves out of every item's result: they travel once, with the result its last word carries.
SENT_AT_END: dict[type, dict[str, Any]] = {RunResult: {"trace": None}}


def head(result: Any) -> Any:
    """What a worker sends with a new item: the result without its items (a result of another type whole)."""
    grows = GROWS.get(type(result))
    return result if grows is None else replace(result, **{grows[0]: []}, **SENT_AT_END.get(type(result), {}))


def grown(sent: Any, items: list, item: Any) -> Any:
    """`item` joins `items` (the job's own list); the result as the job has it now: `sent` holding a copy of them
    (a page may read it while the next item joins), or `sent` as it came if its type does not grow."""
    grows = GROWS.get(type(sent))
    if grows is None:
        items.append(item)
        return sent
    name, add = grows
    add(items, item)
    setattr(sent, name, list(items))
    return sent
