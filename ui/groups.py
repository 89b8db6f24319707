"""A comparison's runs as one group, as History offers them again: the runs one Run (or one `python -m core compare`)
queued share an id before its '-N'; found, named, overlaid again, and named in an address (?group=ID).
"""

from __future__ import annotations

import streamlit as st

from core.history.rows import HistoryRow
from core.language.i18n import _
from ui import run_text


def comparison_groups(rows: list[HistoryRow]) -> dict[str, list[str]]:
    """Runs that one Run (or one `python -m core compare`) queued share an id before '-N': group -> its ids, in
    order."""
    found: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        head, _sep, n = row.run_id.rpartition("-")
        if head and n.isdigit():
            found.setdefault(head, []).append((int(n), row.run_id))
    return {group: [i for _, i in sorted(ids)] for group, ids in found.items() if len(ids) > 1}


def overlay_group(groups: dict[str, list[str]]) -> None:
    ss = st.session_state
    if ss.get("history_group") in groups:
        ss.history_pick = groups[ss.history_group]
        ss.confirm_delete = None  # a new pick withdraws a pending "delete?" question


GROUP_PARAM = "group"  # the address' name of a comparison to overlay (the Train view's link to its last one)


def group_label(by_id: dict[str, HistoryRow], groups: dict[str, list[str]], group: str) -> str:
    """'2026-12-04 20:53 · 2 runs · mlp on fashion_mnist · 2469453e': a comparison as the page names it."""
    first = by_id[groups[group][0]]
    said = _("{when} · {n} runs · {model} on {dataset} · {group}")
    n = len(groups[group])
    return said.format(when=run_text.short_time(first.when), n=n, model=first.model, dataset=first.dataset, group=group)


def linked_group(groups: dict[str, list[str]]) -> None:
    """A comparison the address names (?group=ID), overlaid once per session and address: a link from Train."""
    ss, group = st.session_state, st.query_params.get(GROUP_PARAM)
    if group in groups and ss.get("history_group_read") != group:
        ss.history_group_read, ss.history_group = group, group
        overlay_group(groups)


def groups_ui(rows: list[HistoryRow]) -> None:
    """One pick overlays a whole comparison again: every run of one group, in the order they ran."""
    groups = comparison_groups(rows)
    if not groups:
        return
    by_id = {r.run_id: r for r in rows}
    linked_group(groups)

    def label(group: str | None) -> str:
        return _("Choose a comparison") if group is None else group_label(by_id, groups, group)

    st.selectbox(
        _("Overlay a comparison again"),
        [None, *groups],
        key="history_group",
        format_func=label,
        on_change=overlay_group,
        args=(groups,),
    )
