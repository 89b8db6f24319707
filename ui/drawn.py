"""What every page draws of the same runs, drawn once per change and replayed to every other page.

A room of 30 viewers had each redrawn the runs' charts, the headline's bootstrap, the table and what the model
learned for itself at every change: 30 times the work, on the cores the run under measurement uses (bench/room.py).
once() runs a drawing function under st.cache_data, whose cache replays the elements it drew: the first page after a
change draws, every other page (and this one's next rerun) gets the same elements back. The key says everything the
drawing depends on (the runs' ids and progress, labels, the chart settings); the runs themselves are not hashed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from ui import live, watcher

MAX_KEPT = 32  # drawings kept: a few per view and setting; each holds its charts' data (a few hundred kB at most)


@st.cache_data(max_entries=MAX_KEPT, show_spinner=False)
def _replay(key: Hashable, _draw: Callable[..., Any], _args: tuple) -> Any:
    return _draw(*_args)


def once(key: Hashable | None, draw: Callable[..., Any], *args: Any) -> Any:
    """draw(*args), drawn once per distinct key and replayed on every page after; None: drawn here, not kept."""
    if key is None:
        return draw(*args)
    return _replay((draw.__module__, draw.__qualname__, key), draw, args)


def progress_key(jobs: Any) -> tuple:
    """The key of runs live on a page: what makes every page redraw them (ui.watcher's Snapshot.progress()): each
    job's id, state, finished epochs and how many REDRAW_S of the epoch in progress have passed. Every page that
    redraws within one such step gets the same drawing."""
    return tuple((s.run_id, s.state, s.done, live.moved(s, watcher.REDRAW_S)) for s in jobs)


def stored_key(results: Any) -> tuple:
    """The key of stored runs: each one's id, status and epochs (a stored run changes only by finishing)."""
    return tuple((r.run_id, r.status, len(r.epochs)) for r in results)
