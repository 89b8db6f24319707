"""Whether the machine was busy with other programs while runs trained, from what each epoch recorded of the rest of
the machine's CPU (EpochMetrics.others_cores, core.engine.load). No TensorFlow."""

from __future__ import annotations

import statistics

from core.language.i18n import _

BUSY = 0.10  # other programs' share of the machine's cores above which a headline says so


def cores(results) -> int | None:
    """The machine's CPU cores, as its runs recorded them (logical_cpus counts TensorFlow's CPU devices instead)."""
    found = [r.host.get("cpu_cores") for r in results if r.host]
    return max(found) if found and all(found) else None


def others_share(results) -> float | None:
    """The share of the machine's cores other programs used during the runs' steady epochs, on average."""
    figures = [e.others_cores for r in results for e in r.steady_epochs() if e.others_cores is not None]
    total = cores(results)
    return statistics.mean(figures) / total if figures and total else None


def busy_sentence(results) -> str | None:
    """One sentence where other programs used more than BUSY of the machine during the runs, with the figure."""
    share = others_share(results)
    if share is None or share <= BUSY:
        return None
    said = _("Other programs used {share:.0%} of the CPU during these runs; pressing Run again may give another ratio.")
    return said.format(share=share)
