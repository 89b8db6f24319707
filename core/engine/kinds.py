"""The jobs the engine can run, by config type: what a Runner is given (core.runner never imports the engine)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.config import SweepConfig, TrainConfig
from core.engine.sweep import run_sweep
from core.engine.training import train


def _train(config: TrainConfig, on_item, should_stop, run_id: str):
    return train(config, on_epoch=on_item, should_stop=should_stop, run_id=run_id)


def _sweep(config: SweepConfig, on_item, should_stop, run_id: str):
    return run_sweep(config, on_point=on_item, should_stop=should_stop, run_id=run_id)


# config type -> job(config, on_item(item, result), should_stop() -> bool, run_id) -> result
JOB_KINDS: dict[type, Callable[..., Any]] = {TrainConfig: _train, SweepConfig: _sweep}
