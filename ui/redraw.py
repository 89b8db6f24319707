"""When a page draws its runs again: what it drew of each job (Drawn) against what the jobs are now.

A page reruns whole (charts, headline, tables) when a job starts or ends, when a run has its first points, at each
round of runs taking turns, and otherwise at most every REDRAW_S while epochs land; its live fragment redraws only
text between (ui.watcher). ui.draw_once takes every page's shared frame of the runs by the same rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from core.results.states import State
from core.runner import JobStatus
from ui import live

# Charts redrawn at most this often while epochs land: each redraw slows a CPU run (bench/headline_in_page.py).
REDRAW_S = 3.0


class Drawn(NamedTuple):
    """What the view draws of one job; a change of these redraws the page (should_redraw)."""

    run_id: str
    state: str
    done: int  # finished epochs (sweep points)
    moved: int  # REDRAW_S steps of the epoch in progress (live.moved); -1 before its first points


def drawn(s: JobStatus) -> Drawn:
    """What the view draws of job s: its state, finished items, and every REDRAW_S of the epoch in progress."""
    return Drawn(s.run_id, s.state, s.done, live.moved(s, REDRAW_S))


def should_redraw(
    progress: Iterable[tuple], drawn: Iterable[tuple] | None, drawn_at: float, now: float, every: float = REDRAW_S
) -> bool:
    """A job changed state (started, ended) since the last full draw, or a run has its first points: at once. Runs
    taking turns all finished another epoch (a round: the charts show each run at the same epoch): at once too.
    Otherwise epochs landed, or a long epoch moved (JobsNow.progress()): once `every` (REDRAW_S; longer for a
    viewer's page in a large room) has passed since that draw, at `drawn_at`. Each of progress and drawn: Drawn per job,
    in the same order."""
    if drawn is None:
        return True
    now_, then = [Drawn(*p) for p in progress], [Drawn(*d) for d in drawn]
    if now_ == then:
        return False
    if [(p.run_id, p.state) for p in now_] != [(d.run_id, d.state) for d in then]:
        return True
    if any((d.done, d.moved) == (0, -1) and (p.done, p.moved) != (0, -1) for p, d in zip(now_, then, strict=True)):
        return True  # a run's first points (epoch 1's first calls): the race moves seconds after Run
    rounds = {p.done for p in now_ if p.state == State.RUNNING}
    running = sum(p.state == State.RUNNING for p in now_)
    if running > 1 and len(rounds) == 1 and rounds != {d.done for d in then if d.state == State.RUNNING}:
        return True
    return now - drawn_at >= every
