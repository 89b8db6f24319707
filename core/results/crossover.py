"""Where one device overtakes another in a batch-size sweep, in words, from each point's samples per second.

A point's samples/s is its repeats' throughput (as core.engine.sweep records it), the same measure as every speedup
on the page. The sentence is part of the sweep file (older files carry it), so it lives with the format, below the
history that recomputes it on read.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.language.i18n import _
from core.results import SweepPoint


def _batches(values: list[int]) -> str:
    text = [str(v) for v in values]
    return text[0] if len(text) == 1 else _("{first} and {last}").format(first=", ".join(text[:-1]), last=text[-1])


def _pair_sentence(base: str, other: str, base_rates: dict[int, float], other_rates: dict[int, float]) -> str:
    b, o = base.upper(), other.upper()
    common = sorted(set(base_rates) & set(other_rates))
    if not common:
        return _("No batch size was measured on both {base} and {other}.").format(base=b, other=o)
    faster = [n for n in common if other_rates[n] > base_rates[n]]
    slower = [n for n in common if n not in faster]
    if not slower:
        if len(common) == 1:
            return _("{other} faster at batch {batch}.").format(other=o, batch=common[0])
        said = _("{other} faster at every batch size in this range ({low} to {high}).")
        return said.format(other=o, low=common[0], high=common[-1])
    if not faster:
        return _("No crossover in this range ({base} faster at every batch size).").format(base=b)
    flags = [n in faster for n in common]
    switches = sum(1 for i in range(1, len(flags)) if flags[i] != flags[i - 1])
    if switches == 1 and flags[-1]:
        return _("{other} faster from batch {batch}.").format(other=o, batch=faster[0])
    if switches == 1:
        said = _("{other} faster up to batch {last}; {base} faster from batch {first}.")
        return said.format(other=o, last=faster[-1], base=b, first=slower[0])
    said = _("No clean crossover: {other} faster at batch {faster}, {base} at {slower}.")
    return said.format(other=o, faster=_batches(faster), base=b, slower=_batches(slower))


def crossover_sentence(points: Iterable[SweepPoint]) -> str:
    """Where each device overtakes the baseline (the first CPU), by each point's samples/s: 'GPU faster from batch
    256.'"""
    rates: dict[str, dict[int, float]] = {}
    for p in points:
        rates.setdefault(p.device, {})
        if p.samples_per_second:
            rates[p.device][p.batch_size] = p.samples_per_second
    if len(rates) < 2:
        return _("A crossover needs two devices measured, e.g. cpu and gpu.")
    base = next((d for d in rates if d.startswith("cpu")), next(iter(rates)))
    return " ".join(_pair_sentence(base, d, rates[base], rates[d]) for d in rates if d != base)
