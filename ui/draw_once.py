"""What every page draws of the same runs, drawn once per change and replayed to every other page.

A room of 30 viewers had each redrawn the runs' charts, the headline's bootstrap, the table and what the model
learned for itself at every change: 30 times the work, on the cores the run under measurement uses (bench/room.py).
once() runs a drawing function under st.cache_data, whose cache replays the elements it drew: the first page after a
change draws, every other page (and this one's next rerun) gets the same elements back. The key says everything the
drawing depends on (the runs' ids and progress, labels, the chart settings); the runs themselves are not hashed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from core.language import i18n
from ui import redraw

MAX_KEPT = 32  # drawings kept: a few per view and setting; each holds its charts' data (a few hundred kB at most)
FRAME_KEPT_S = 600.0  # a group's frame nobody asked for this long is forgotten


@st.cache_data(max_entries=MAX_KEPT, show_spinner=False)
def _replay(key: Hashable, _draw: Callable[..., Any], _args: tuple) -> Any:
    return _draw(*_args)


def once(key: Hashable | None, draw: Callable[..., Any], *args: Any) -> Any:
    """draw(*args), drawn once per distinct key and language and replayed on every page after; None: drawn here,
    not kept. The language is in the key: a Chinese page never replays an English drawing."""
    if key is None:
        return draw(*args)
    return _replay((draw.__module__, draw.__qualname__, i18n.language(), key), draw, args)


_frames: dict[tuple, tuple[tuple, float, tuple]] = {}  # the runs' ids -> (progress, when, their snapshots)
_frames_lock = threading.Lock()


def frame(jobs: tuple) -> tuple[tuple, tuple]:
    """(key, jobs) of the frame every page draws of these live runs: the runs as they were when the frame was last
    taken, taken again when ui.redraw.should_redraw says a page would redraw (a run started or ended, a round of
    runs taking turns, else REDRAW_S later). Pages redrawing within one frame draw the same thing, so only the
    first draws it; epochs land faster than a room of pages redraws, so a key of each page's own moment (`done`
    per run) would differ on every page."""
    if not jobs:
        return (), jobs
    ids, progress, now = tuple(s.run_id for s in jobs), progress_key(jobs), time.monotonic()
    with _frames_lock:
        kept = _frames.get(ids)
        if kept is None or redraw.should_redraw(progress, kept[0], kept[1], now):
            kept = _frames[ids] = (progress, now, tuple(jobs))
            for old in [k for k, v in _frames.items() if now - v[1] > FRAME_KEPT_S]:
                del _frames[old]
    return kept[0], kept[2]


def progress_key(jobs: Any) -> tuple:
    """The key of runs live on a page: what makes every page redraw them (ui.redraw.Drawn, per job). Every page that
    redraws within one such step gets the same drawing."""
    return tuple(redraw.drawn(s) for s in jobs)


def stored_key(results: Any) -> tuple:
    """The key of stored runs: each one's id, status and epochs (a stored run changes only by finishing)."""
    return tuple((r.run_id, r.status, len(r.epochs)) for r in results)
