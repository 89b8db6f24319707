"""The History view: past runs of this machine and imported ones; overlay, compare, download, delete, import.

Run by st.navigation as a page (the guard at the bottom). Reads the store only while on screen.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core.analysis import compare
from core.history import archive, profiles
from core.history.importer import MAX_FILE_BYTES, ImportOutcome, RunFileError
from core.history.rows import HistoryRow
from core.history.store import Store, StoreError
from core.language.i18n import _, ngettext
from core.results.states import State
from ui import (
    access,
    comparison,
    draw_once,
    groups,
    layout,
    run_text,
    salvage,
    tables,
    tensorboard_log,
    view_state,
    watcher,
)
from ui.resources import get_store

PICK = {"history_pick": []}  # kept across views: the runs picked to overlay


def import_file(store: Store, name: str, data: bytes) -> tuple[str, str, ImportOutcome | None]:
    """Import a run or sweep file's bytes: (level success/info/error, one sentence, the outcome or None)."""
    try:
        outcome = store.import_file(data)
    except (RunFileError, StoreError) as err:
        return "error", _("{name}: {problem}").format(name=name, problem=err), None
    return ("success" if outcome.added else "info"), outcome.describe(), outcome


def on_upload() -> None:
    ss = st.session_state
    if not access.allowed():  # the uploader is disabled for a viewer, but a hostile page can still send files
        ss.import_messages = [("error", _(access.DENIED))]
        return
    files = ss.get("history_upload") or []
    if not files:  # the files were removed from the uploader
        ss.import_messages = []
        return
    # Each file once: the uploader keeps every file chosen so far, and one imported again would bring back a run
    # deleted since (upload A, delete A, upload B: A was back).
    seen = ss.setdefault("imported_uploads", set())
    new = [f for f in files if f.file_id not in seen]
    if not new:
        return
    messages: list[tuple[str, str]] = []
    picked = [0]  # runs of this upload picked for the charts so far
    for file in new:
        seen.add(file.file_id)
        if not file.name.lower().endswith(".zip"):
            messages.append(import_one(file.name, file.getvalue(), picked))
            continue
        try:  # one member in memory at a time, imported before the next is read (core.history.archive)
            for member in archive.zip_members(file.getvalue()):
                if member.problem:
                    said = _("{name}: {member}: {problem}").format(
                        name=file.name, member=member.name, problem=member.problem
                    )
                    messages.append(("error", said))
                else:
                    messages.append(import_one(member.name, member.data, picked))
        except archive.ArchiveError as err:
            messages.append(("error", _("{name}: {problem}").format(name=file.name, problem=err)))
    if picked[0] > MAX_PICKED:
        said = _("The first {n} runs imported are picked for the charts; pick others below.").format(n=MAX_PICKED)
        messages.append(("info", said))
    ss.import_messages = messages


# Runs one upload picks for the charts: a .zip of 200 runs drawn all at once had taken the server a minute and a GB.
MAX_PICKED = 6


def import_one(name: str, data: bytes, picked: list[int]) -> tuple[str, str]:
    """Import one file's bytes; a run is picked for the charts (the first MAX_PICKED of an upload), a sweep kept for
    the Scaling view. picked[0] counts this upload's runs."""
    ss = st.session_state
    level, sentence, outcome = import_file(get_store(), name, data)
    if outcome is not None and outcome.kind == "sweep":
        ss[view_state.KEPT] = {**ss.get(view_state.KEPT, {}), "sweep_pick": outcome.run_id}  # shown first on Scaling
        ss.pop("sweep_pick", None)
        sentence += " " + _("It is in the Scaling view.")
    elif outcome is not None:  # a run: picked for the charts, next to whatever was picked already
        picked[0] += 1
        if picked[0] <= MAX_PICKED:
            ss.history_pick = list(dict.fromkeys([*ss.get("history_pick", []), outcome.run_id]))
    return level, sentence


def ask_delete(ids: list[str] | None) -> None:
    st.session_state.confirm_delete = ids if access.allowed() else None


def delete_runs(ids: list[str]) -> None:
    ss, store = st.session_state, get_store()
    if not access.allowed():  # checked here, not only in the disabled button
        ss.import_messages = [("error", _(access.DENIED))]
        return
    gone = [i for i in ids if store.delete(i)]
    ss.history_pick = [i for i in ss.get("history_pick", []) if i not in gone]
    ss.confirm_delete = None
    said = ngettext(
        "Deleted {n} run; every other run is kept.", "Deleted {n} runs; every other run is kept.", len(gone)
    )
    ss.history_note = said.format(n=len(gone))


# The importer's limit, which Streamlit's server.maxUploadSize enforces too (.streamlit/config.toml, ui/share.py).
UPLOAD_LIMIT_MB = MAX_FILE_BYTES // 2**20


def upload_ui() -> None:
    """The importer: JSON files from `python -m core train --json` (or `sweep --json`), or this view's .zip download."""
    st.file_uploader(
        _(
            "Import runs or sweeps from another machine: the JSON files `python -m core train --json` or "
            "`sweep --json` write, or a .zip of them as this view downloads (at most {limit} MiB a file)"
        ).format(limit=UPLOAD_LIMIT_MB),
        # No type filter: the importer names each file it refuses and says why. The size limit is the server's
        # own (server.maxUploadSize): a larger file never reaches this process, and the browser says so.
        max_upload_size=UPLOAD_LIMIT_MB,
        disabled=not access.allowed(),
        help=access.help_text(_("Importing")),
        accept_multiple_files=True,
        key="history_upload",
        on_change=on_upload,
    )
    for level, sentence in st.session_state.get("import_messages") or []:
        {"success": st.success, "info": st.info, "error": st.error}[level](run_text.plain(sentence))


def pick_ui(rows: list[HistoryRow]) -> list[HistoryRow]:
    """The runs picked to overlay, in the order picked."""
    by_id = {r.run_id: r for r in rows}
    ss = st.session_state
    ss.history_pick = [i for i in ss.history_pick if i in by_id]  # deleted elsewhere: dropped
    picked = st.multiselect(
        _("Runs to overlay (pick two to compare them)"),
        list(by_id),
        key="history_pick",
        format_func=lambda i: run_text.pick_label(by_id[i]),
        placeholder=_("Choose runs from the table"),
        on_change=ask_delete,  # a new pick withdraws a pending "delete?" question
        args=(None,),
    )
    return [by_id[i] for i in picked]


def compare_ui(store: Store, picked: list[HistoryRow]) -> None:
    """The picked runs on the Train view's two charts, with their summary and, for two, the speedup."""
    results = {r.run_id: r for r in store.load([p.run_id for p in picked])}
    picked = [p for p in picked if p.run_id in results]
    runs = [results[p.run_id] for p in picked]
    if not runs:  # deleted from another page since the table was read
        return
    pair = comparison.compare_ui(
        runs,
        run_text.run_labels(picked, [{**r.config, "jit_compile": bool(r.device.get("jit_compile"))} for r in runs]),
        key=draw_once.stored_key(runs),  # every page picking these runs shows one drawing (ui/draw_once.py)
    )
    if pair and (sentence := run_text.differences_sentence(runs[pair[0]], runs[pair[1]])):
        st.caption(run_text.plain(sentence))


def actions_ui(store: Store, picked: list[HistoryRow]) -> None:
    """Download the picked runs (JSON as the CLI writes it, and CSV), or delete them after a confirmation."""
    ids = [p.run_id for p in picked]
    n = len(ids)
    if n == 1:
        name, data, mime = f"run-{ids[0]}.json", store.export_json(ids[0]), "application/json"
    else:  # one file per run, each importable again
        name, mime = "runs.zip", "application/zip"
        data = archive.zip_files({f"run-{i}.json": store.export_json(i) for i in ids})
    csv = tables.join_csv([store.export_csv(i) for i in ids])
    left, middle, right = st.columns(3)
    # Deferred (a callable): the file is made when clicked, not put in the media store on every rerun, where
    # the next rerun replaced it before a slow browser had fetched it ("Download Button source error - 404").
    json_label = ngettext("Download run · JSON", "Download {n} runs · JSON", n).format(n=n)
    left.download_button(json_label, lambda: data, name, mime, key="history_json", on_click="ignore")
    tensorboard_log.tensorboard_ui(left, store, ids)
    csv_label = ngettext("Download run · CSV", "Download {n} runs · CSV", n).format(n=n)
    middle.download_button(csv_label, lambda: csv, "epochs.csv", "text/csv", key="history_csv", on_click="ignore")
    traced = {f"run-{p.run_id}": (p.host or "host", found) for p in picked if (found := store.trace(p.run_id))}
    if traced:  # each picked run's profiler trace, as log directories TensorBoard's profile plugin opens
        label = ngettext("Download trace · TensorBoard", "Download {n} traces · TensorBoard", len(traced))
        middle.download_button(
            label.format(n=len(traced)),
            partial(profiles.profile_zip, traced),
            "traces.zip",
            "application/zip",
            key="history_trace",
            on_click="ignore",
        )
    deletable = [p.run_id for p in picked if p.status != State.RUNNING]
    right.button(
        ngettext("Delete run…", "Delete {n} runs…", n).format(n=n),
        key="history_delete",
        on_click=ask_delete,
        args=(deletable,),
        disabled=not deletable or not access.allowed(),
        help=access.help_text(_("Deleting")),
    )
    if n > len(deletable):
        st.caption(_("A run in progress cannot be deleted; stop it first."))
    confirm = [i for i in st.session_state.get("confirm_delete") or [] if i in deletable]
    if confirm:
        st.warning(
            ngettext(
                "Delete {n} run and their epochs from the history? This cannot be undone; every other run is kept.",
                "Delete {n} runs and their epochs from the history? This cannot be undone; every other run is kept.",
                len(confirm),
            ).format(n=len(confirm))
        )
        yes, no, _rest = st.columns([1, 1, 4])
        yes.button(_("Yes, delete"), key="history_delete_yes", type="primary", on_click=delete_runs, args=(confirm,))
        no.button(_("Cancel"), key="history_delete_no", on_click=ask_delete, args=(None,))


def history_ui() -> None:
    """A table of every run, then the picked ones overlaid, with downloads and deletion."""
    store = get_store()
    upload_ui()
    if note := st.session_state.pop("history_note", None):
        st.success(note)
    try:
        rows = store.history()
    except StoreError as err:  # a damaged file: said, with the way to save what can still be read
        st.error(str(err))
        salvage.salvage_ui(store.path, str(err))
        return
    if not rows:
        st.info(_("No runs yet. Runs from the Train view appear here as they start; so do imported ones."))
        return
    st.dataframe(
        tables.history_frame(rows).rename(columns=_),  # the table's headings in the page's language
        hide_index=True,
        key="history_table",
        placeholder=tables.MISSING,
        column_config={
            _("Test accuracy"): st.column_config.NumberColumn(format="%.1f%%"),
            _("Steady epoch (s)"): st.column_config.NumberColumn(format="%.3f", help=_(compare.STEADY_EPOCH)),
        },
    )
    groups.groups_ui(rows)
    picked = pick_ui(rows)
    if not picked:
        st.caption(_("Pick runs above to overlay their curves, compare their speed, download or delete them."))
        return
    try:
        compare_ui(store, picked)
        actions_ui(store, picked)
    except StoreError as err:  # a damaged page among these runs' epochs
        st.error(str(err))
        salvage.salvage_ui(store.path, str(err))


def main() -> None:
    layout.style()
    view_state.restore(PICK)
    snap = watcher.jobs_now([])
    history_ui()
    view_state.remember(PICK)
    watcher.live_ui(snap)  # the queue line; a run that finishes reruns the page, so the table includes it


if __name__ == "__main__":  # st.navigation runs this file as the History page
    main()
