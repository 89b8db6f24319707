"""The History view: past runs of this machine and imported ones; overlay, compare, download, delete, import.

Run by st.navigation as a page (the guard at the bottom). Reads the store only while on screen.
"""

from __future__ import annotations

import streamlit as st

from core.history.importer import MAX_FILE_BYTES, ImportOutcome, RunFileError
from core.history.rows import HistoryRow
from core.history.store import Store, StoreError
from ui import comparison, kept, views, watcher
from ui.resources import get_store

PICK = {"history_pick": []}  # kept across views: the runs picked to overlay


def import_file(store: Store, name: str, data: bytes) -> tuple[str, str, ImportOutcome | None]:
    """Import a run or sweep file's bytes: (level success/info/error, one sentence, the outcome or None)."""
    try:
        outcome = store.import_result_bytes(data)
    except (RunFileError, StoreError) as err:
        return "error", f"{name}: {err}", None
    return ("success" if outcome.added else "info"), outcome.describe(), outcome


def on_upload() -> None:
    ss = st.session_state
    file = ss.get("history_upload")
    if file is None:  # the file was removed from the uploader
        ss.import_message = None
        return
    level, sentence, outcome = import_file(get_store(), file.name, file.getvalue())
    if outcome is not None and outcome.kind == "sweep":
        ss[kept.KEPT] = {**ss.get(kept.KEPT, {}), "sweep_pick": outcome.run_id}  # shown first on Scaling
        ss.pop("sweep_pick", None)
        sentence += " It is in the Scaling view."
    elif outcome is not None:  # a run: picked for the charts, next to whatever was picked already
        ss.history_pick = list(dict.fromkeys([*ss.get("history_pick", []), outcome.run_id]))
    ss.import_message = (level, sentence)


def ask_delete(ids: list[str] | None) -> None:
    st.session_state.confirm_delete = ids


def delete_runs(ids: list[str]) -> None:
    ss, store = st.session_state, get_store()
    gone = [i for i in ids if store.delete(i)]
    ss.history_pick = [i for i in ss.get("history_pick", []) if i not in gone]
    ss.confirm_delete = None
    ss.history_note = f"Deleted {len(gone)} run{'' if len(gone) == 1 else 's'}; every other run is kept."


def upload_ui() -> None:
    """The importer: a JSON file from `python -m core train --json` (or `sweep --json`) on another machine."""
    limit_mb = MAX_FILE_BYTES / 1e6
    st.file_uploader(
        f"Import a run or a sweep from another machine: the JSON file `python -m core train --json` "
        f"or `sweep --json` writes (at most {limit_mb:g} MB)",
        type=["json"],
        key="history_upload",
        on_change=on_upload,
        # Streamlit's own limit, in its megabytes, is at least the importer's: files between the two
        # reach the importer, which refuses them with its one sentence.
        max_upload_size=max(1, round(limit_mb + 0.5)),
    )
    message = st.session_state.get("import_message")
    if message:
        {"success": st.success, "info": st.info, "error": st.error}[message[0]](views.plain(message[1]))


def pick_ui(rows: list[HistoryRow]) -> list[HistoryRow]:
    """The runs picked to overlay, in the order picked."""
    by_id = {r.run_id: r for r in rows}
    ss = st.session_state
    ss.history_pick = [i for i in ss.history_pick if i in by_id]  # deleted elsewhere: dropped
    picked = st.multiselect(
        "Runs to overlay (pick two to compare them)",
        list(by_id),
        key="history_pick",
        format_func=lambda i: views.pick_label(by_id[i]),
        placeholder="Choose runs from the table",
        on_change=ask_delete,  # a new pick withdraws a pending "delete?" question
        args=(None,),
    )
    return [by_id[i] for i in picked]


def compare_ui(store: Store, picked: list[HistoryRow]) -> None:
    """The picked runs on the Train view's two charts, with their summary and, for two, the speedup."""
    results = {r.run_id: r for r in store.load([p.run_id for p in picked])}
    picked = [p for p in picked if p.run_id in results]
    runs, labels = [results[p.run_id] for p in picked], views.run_labels(picked)
    if not runs:  # deleted from another page since the table was read
        return
    pair = views.slower_first(runs)
    comparison.compare_ui(runs, labels, pair)
    if pair and (differences := views.config_differences(runs[pair[0]], runs[pair[1]])):
        st.caption(
            f"Besides the device, these runs differ in {'; '.join(differences)}: the ratio compares whole epochs, "
            "not the devices alone."
        )


def actions_ui(store: Store, picked: list[HistoryRow]) -> None:
    """Download the picked runs (JSON as the CLI writes it, and CSV), or delete them after a confirmation."""
    ids = [p.run_id for p in picked]
    n = len(ids)
    if n == 1:
        name, data, mime = f"run-{ids[0]}.json", store.export_json(ids[0]), "application/json"
    else:  # one file per run, each importable again
        name, mime = "runs.zip", "application/zip"
        data = views.zip_files({f"run-{i}.json": store.export_json(i) for i in ids})
    csv = views.join_csv([store.export_csv(i) for i in ids])
    what = "run" if n == 1 else f"{n} runs"
    left, middle, right = st.columns(3)
    left.download_button(f"Download {what} · JSON", data, name, mime, key="history_json", on_click="ignore")
    middle.download_button(
        f"Download {what} · CSV", csv, "epochs.csv", "text/csv", key="history_csv", on_click="ignore"
    )
    deletable = [p.run_id for p in picked if p.status != "running"]
    right.button(
        f"Delete {what}…", key="history_delete", on_click=ask_delete, args=(deletable,), disabled=not deletable
    )
    if n > len(deletable):
        st.caption("A run in progress cannot be deleted; stop it first.")
    confirm = [i for i in st.session_state.get("confirm_delete") or [] if i in deletable]
    if confirm:
        st.warning(
            f"Delete {len(confirm)} run{'' if len(confirm) == 1 else 's'} and their epochs from the history? "
            "This cannot be undone; every other run is kept."
        )
        yes, no, _ = st.columns([1, 1, 4])
        yes.button("Yes, delete", key="history_delete_yes", type="primary", on_click=delete_runs, args=(confirm,))
        no.button("Cancel", key="history_delete_no", on_click=ask_delete, args=(None,))


def history_ui() -> None:
    """A table of every run, then the picked ones overlaid, with downloads and deletion."""
    store = get_store()
    upload_ui()
    if note := st.session_state.pop("history_note", None):
        st.success(note)
    rows = store.history()
    if not rows:
        st.info("No runs yet. Runs from the Train view appear here as they start; so do imported ones.")
        return
    st.dataframe(
        views.history_frame(rows),
        hide_index=True,
        key="history_table",
        column_config={
            "Test accuracy": st.column_config.NumberColumn(format="percent"),
            "Median epoch (s)": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    picked = pick_ui(rows)
    if not picked:
        st.caption("Pick runs above to overlay their curves, compare their speed, download or delete them.")
        return
    compare_ui(store, picked)
    actions_ui(store, picked)


def main() -> None:
    kept.restore(PICK)
    snap = watcher.take([])
    history_ui()
    kept.remember(PICK)
    watcher.live_ui(snap)  # the queue line; a run that finishes reruns the page, so the table includes it


if __name__ == "__main__":  # st.navigation runs this file as the History page
    main()
