"""A comparison made one change at a time (plain fit, then the multi-step loop, then XLA on it): each change's
speedup over the run before it, measured in the same press, so a headline over several changes shows what each
bought. No TensorFlow."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from core.analysis import compare
from core.results import RunResult

# What a run's config holds that is not a setting a comparison changes.
NOT_CHANGES = frozenset({"node"})


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The settings two runs' configs differ in, in the first's order."""
    return [k for k in dict.fromkeys([*a, *b]) if k not in NOT_CHANGES and a.get(k) != b.get(k)]


def is_chain(results: list[RunResult]) -> bool:
    """Runs made one change at a time (chained)."""
    return chained([r.config for r in results])


def chained(configs: list[dict[str, Any]]) -> bool:
    """Three or more configs, each differing from the one before it in exactly one setting, not all in the same one
    (that is a comparison along one axis: core.settings.axes)."""
    changed = [differences(a, b) for a, b in pairwise(configs)]
    return len(configs) >= 3 and all(len(c) == 1 for c in changed) and len({c[0] for c in changed}) > 1


def steps(results: list[RunResult]) -> list[compare.Speedup | str | None]:
    """Each run's speedup over the run before it (compare.REFERENCE for the first; None before its epoch 2)."""
    if not results:
        return []
    return [compare.REFERENCE] + [compare.speedup(a, b) for a, b in pairwise(results)]


def step_rows(results: list[RunResult]) -> list[tuple[str, str, str]]:
    """Per run: (the setting it changed, as 'execution = multi-step-loop'; its steady samples/s; its speedup over
    the run before it), as the page's table prints them."""
    rows = []
    for i, (run, found) in enumerate(zip(results, steps(results), strict=True)):
        changed = differences(results[i - 1].config, run.config) if i else []
        rate = compare.throughput(run)
        said = ", ".join(f"{k} = {run.config.get(k)}" for k in changed)
        rows.append((said, f"{rate:,.0f}" if rate else "-", compare.ratio_words(found)))
    return rows
