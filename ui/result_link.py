"""A comparison in the page's address: `?runs=ID,ID` names the runs the Train view shows, so a reload, or the link
sent to someone, draws that result from the history; and an empty Train view points at History's last comparison.

A Run writes its runs' ids into the address when it starts (ui.train.start_runs). A page session that shows no runs
of its own (a reload: a new session) reads them back at every script run: still training, the runner's view of them
is the page's (ui.watcher finds them); finished, they come from the history, the same figures the page drew.
"""

from __future__ import annotations

import re
import socket

import streamlit as st

from core.history.rows import history_row
from core.history.store import StoreError
from core.language import progress
from core.language.i18n import N_, _
from core.results import RunResult
from core.results.states import State
from ui import compared, groups, run_text
from ui.labels import distinct_labels
from ui.resources import get_store

PARAM = "runs"  # the address' name
MOST = 6  # ids read from an address at most: a comparison has 2-4 runs
RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
FROM_HISTORY = N_("From the history (the runs in this page's address, {when}): {line}")


KEPT = "result_runs"  # session_state: the ids the address held, written back after a view change emptied it


def remember(ids: list[str]) -> None:
    """These runs are the page's result from now on: in the address, for a reload or a link."""
    st.session_state[KEPT] = ids
    st.query_params[PARAM] = ",".join(ids)


def linked() -> list[str]:
    """The run ids the address names, in order, at most MOST; none where any is not a run id (a mangled link). A
    view change empties the address (as ui.lang finds it): the ids this session held go back into it."""
    if PARAM not in st.query_params and st.session_state.get(KEPT):
        remember(st.session_state[KEPT])
    ids = list(dict.fromkeys((st.query_params.get(PARAM) or "").split(",")))[:MOST]
    ids = ids if all(RUN_ID.fullmatch(i) for i in ids) else []
    st.session_state[KEPT] = ids
    return ids


def stored(ids: list[str]) -> list[RunResult]:
    """The address' runs as the history keeps them, none still running; [] when any is missing or unreadable (a
    deleted run, another machine's link): the page is then as it would be without them."""
    if not ids:
        return []
    try:
        results = get_store().load(ids)
    except StoreError:
        return []
    if len(results) != len(ids) or any(r.status in (State.RUNNING, State.QUEUED) for r in results):
        return []
    return results


def labels(results: list[RunResult]) -> list[str]:
    """The runs' labels as the Train view named them while they trained ('CPU (plain fit)': device, then what
    differs, the XLA each used included); runs of another host as History names them ('GPU:0 on gpu-server')."""
    configs = [{**r.config, "jit_compile": bool(r.device.get("jit_compile"))} for r in results]
    if any(r.host.get("hostname") != socket.gethostname() for r in results):
        return run_text.run_labels([history_row(r) for r in results], configs)
    return distinct_labels([str(c.get("device") or "?").upper() for c in configs], configs)


def status_line(results: list[RunResult], names: list[str]) -> str:
    """'From the history (…, 2026-12-04 20:53): CPU (plain fit): done, 6 epochs · …', for the status line."""
    parts = [
        _("{label}: {words}").format(
            label=name,
            words=progress.state_words(r.status, "epoch", len(r.epochs), r.config.get("epochs"), bool(r.epochs)),
        )
        for r, name in zip(results, names, strict=True)
    ]
    when = run_text.short_time(results[0].started_at)
    return _(FROM_HISTORY).format(when=when, line="  ·  ".join(parts))


def last_comparison() -> tuple[str, list[RunResult]] | None:
    """(group, its runs) of the history's newest comparison (the runs one Run queued, grouped as History groups
    them), or None."""
    try:
        rows = get_store().history()
        found = groups.comparison_groups(rows)
        if not found:
            return None
        when = {r.run_id: r.when or "" for r in rows}
        group = max(found, key=lambda g: when[found[g][0]])
        return group, get_store().load(found[group])
    except StoreError:
        return None


def pointer_ui() -> None:
    """Under an empty Train view: where the last comparison is (History overlays it), and a way to draw it here."""
    found = last_comparison()
    if found is None or not found[1]:
        return
    group, results = found
    what = compared.what([r.config for r in results])
    said = _("Your last comparison is in History: {what}, {when}.").format(
        what=what, when=run_text.short_time(results[0].started_at)
    )
    st.caption(run_text.plain(said))
    left, right, _rest = st.columns([2, 2, 3], vertical_alignment="center")
    here = {groups.GROUP_PARAM: group}
    left.page_link("ui/history.py", label=_("Open it in History"), icon=":material/history:", query_params=here)
    ids = [r.run_id for r in results if r.run_id]
    right.button(_("Show it here"), key="show_last", on_click=remember, args=(ids,), icon=":material/replay:")
