"""The History view through AppTest: runs seen across sessions, import (good, repeated, bad), overlay, delete.

Two AppTest instances in one process share the runner and the store (conftest points TFDASH_DB at a
throwaway file), as two browser tabs on one server do.
"""

from __future__ import annotations

import io
import socket
import uuid
import zipfile

import pytest
from streamlit.testing.v1 import AppTest

from core.analysis import compare
from core.history import archive
from core.history.importer import RunFileError, parse_result_file
from core.history.limits import MAX_FILE_BYTES
from core.history.rows import history_row
from core.history.store import Store, get_store
from core.results import steady_epoch_seconds
from core.settings.config import TrainConfig
from tests.sample_runs import make_result
from tests.store_helpers import checkpoint
from tests.test_app import chart_specs, encoding, page, settle
from ui import history, live, run_text, tables
from ui.resources import get_runner

# A training small enough for seconds: 200 synthetic images, two epochs (epoch 2 is the steady one).
TINY = {"dataset": "synthetic", "model": "softmax", "train_subset": 200, "batch_size": 50, "epochs": 2}


def history_table(at: AppTest):
    (table,) = at.dataframe
    return table.value


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    return at.file_uploader(key="history_upload").set_value((name, data, "application/json")).run()


@pytest.fixture(scope="module")
def local_run() -> str:
    """A tiny CPU run trained through the runner, as the Train tab's Run does; its id."""
    (run_id,) = live.submit_group(get_runner(), [TrainConfig(**TINY, device="cpu")])
    assert get_runner().wait(run_id, 120).state == "completed"
    return run_id


def server_file(seed: int = 0) -> tuple[str, bytes]:
    """A GPU server's run file (`train --json` shape) with a fresh id, and its bytes."""
    run_id = f"server-{uuid.uuid4().hex[:8]}"
    return run_id, make_result(run_id=run_id, seed=seed).to_json().encode()


def test_a_run_submitted_in_one_session_is_in_another_sessions_history():
    first = page()
    for key, value in TINY.items():
        first.session_state[key] = value
    first.session_state["mode"] = "cpu"
    settle(first.button(key="run").click().run())
    (run_id,) = first.session_state["train"].ids
    assert get_runner().status(run_id).state == "completed"

    second = page("History")  # another browser tab: it never saw the run
    assert "train" not in second.session_state
    table = history_table(second)
    row = table[table["Run id"] == run_id].iloc[0]
    assert (row["Dataset"], row["Model"], row["Variables on"]) == ("synthetic", "softmax", "CPU:0")
    assert (row["Epochs"], row["Batch"], row["Status"], row["Origin"]) == ("2 of 2", 50, "completed", "local")
    assert row["Host"] == socket.gethostname()
    stored = get_store().get(run_id)
    assert row["Test accuracy"] == pytest.approx(stored.final_test_accuracy() * 100)  # percent, shown as 81.7%
    assert row["Steady epoch (s)"] == pytest.approx(steady_epoch_seconds(stored))  # as Train says it
    assert not second.exception


def test_an_uploaded_server_run_appears_with_its_host_and_overlays_a_local_cpu_run(local_run):
    at = page("History")
    run_id, data = server_file()
    before = len(get_store().history())
    upload(at, "gpu-run.json", data)
    history = at
    assert [s.value for s in history.success] == [
        run_text.plain(f"Imported run {run_id} from gpu-server (GPU:0, completed).")
    ]
    assert len(get_store().history()) == before + 1
    row = history_table(at).set_index("Run id").loc[run_id]
    assert (row["Host"], row["Variables on"], row["Origin"]) == ("gpu-server", "GPU:0", "imported")
    # Where a run ran comes first: on a 1280-pixel projector, Host and Origin need no scrolling.
    assert list(history_table(at).columns[:4]) == ["When", "Variables on", "Host", "Origin"]

    # The import is picked for the charts; add the local CPU run next to it.
    assert at.multiselect(key="history_pick").value == [run_id]
    at.multiselect(key="history_pick").select(local_run).run()
    history = at  # the page as drawn after that rerun
    here = f"CPU:0 on {socket.gethostname()}"
    (acc_spec, acc_rows), (time_spec, time_rows) = chart_specs(history)
    assert encoding(acc_spec)["color"]["scale"]["domain"] == ["GPU:0 on gpu-server", here]
    assert {r["series"] for r in time_rows} == {"GPU:0 on gpu-server", here}
    assert len([r for r in time_rows if r["series"] == "GPU:0 on gpu-server"]) == 3
    (numbers,) = [m.value for m in history.markdown if m.value.startswith("| | ")]
    assert numbers.splitlines()[0].count(" | ") == 2  # a column per run

    # The sentence names the run with more steady samples per second as the faster, by their ratio: the server's
    # epochs hold 1,000 samples, the local run's 200, so the epochs' seconds alone would not compare them.
    server, local = get_store().load([run_id, local_run])
    rates = {"GPU:0 on gpu-server": compare.throughput(server), here: compare.throughput(local)}
    slow, fast = sorted(rates, key=rates.get)
    expected = f"{fast} is {rates[fast] / rates[slow]:.1f}× faster than {slow} ("
    (shown,) = [m.value for m in history.markdown if m.value.startswith("#### ")]
    assert shown.startswith(f"#### {run_text.plain(expected)}") and "training samples per second" in shown
    # The runs differ in more than their device, and the page says so.
    assert any(
        "besides the device" in c.value.lower() and "1,000 samples vs 200 samples" in c.value for c in history.caption
    )
    assert not at.exception

    # The same file again: nothing added, and the page says it is already there.
    upload(at, "gpu-run.json", data)
    assert [i.value for i in at.info] == [
        run_text.plain(f"Run {run_id} from gpu-server is already in the history; nothing changed.")
    ]
    assert len(get_store().history()) == before + 1


@pytest.mark.parametrize(
    "data",
    [
        b'{"schema_version": 1, "config": {}}',
        b"\xff\xfe not UTF-8",
        make_result(run_id="bad-accuracy").to_json().replace('"test_accuracy": 0.', '"test_accuracy": 7.', 1).encode(),
    ],
    ids=["missing-fields", "not-utf8", "accuracy-out-of-range"],
)
def test_a_bad_file_shows_its_one_sentence_and_changes_nothing(data):
    with pytest.raises(RunFileError) as refused:
        parse_result_file(data)
    store = get_store()
    checkpoint(store)
    before = store.path.read_bytes()
    at = upload(page("History"), "bad.json", data)
    history = at
    assert [e.value for e in history.error] == [run_text.plain(f"bad.json: {refused.value}")]
    assert "\n" not in str(refused.value)
    assert not at.exception
    checkpoint(store)
    assert store.path.read_bytes() == before


def test_delete_asks_first_and_removes_only_the_picked_run(local_run):
    at = page("History")
    keep_id, keep = server_file(seed=1)
    gone_id, gone = server_file(seed=2)
    upload(at, "keep.json", keep)
    upload(at, "gone.json", gone)
    at.multiselect(key="history_pick").set_value([gone_id]).run()
    at.button(key="history_delete").click().run()
    # Asked, not done.
    assert any("cannot be undone" in w.value for w in at.warning)
    assert get_store().get(gone_id) is not None
    at.button(key="history_delete_yes").click().run()
    assert get_store().get(gone_id) is None
    assert get_store().get(keep_id) is not None and get_store().get(local_run) is not None
    assert gone_id not in set(history_table(at)["Run id"]) and keep_id in set(history_table(at)["Run id"])
    assert at.multiselect(key="history_pick").value == []
    assert "Deleted 1 run; every other run is kept." in [s.value for s in at.success]
    assert not at.exception


def test_several_runs_download_as_a_zip_of_importable_files_and_one_csv(tmp_path, local_run):
    store = get_store()
    server_id, data = server_file(seed=3)
    store.import_file(data)
    ids = [server_id, local_run]
    zipped = zipfile.ZipFile(io.BytesIO(archive.zip_files({f"run-{i}.json": store.export_json(i) for i in ids})))
    assert sorted(zipped.namelist()) == sorted(f"run-{i}.json" for i in ids)
    elsewhere = Store(tmp_path / "laptop.sqlite3")  # another machine's history
    for name in zipped.namelist():
        assert elsewhere.import_file(zipped.read(name)).added
    assert [r.to_dict() for r in elsewhere.load(ids)] == [r.to_dict() for r in store.load(ids)]

    csv = tables.join_csv([store.export_csv(i) for i in ids]).splitlines()
    assert csv[0].startswith("device,execution,run_id,epoch,")
    assert len(csv) == 1 + sum(len(r.epochs) for r in store.load(ids))
    assert {line.split(",")[2] for line in csv[1:]} == set(ids)
    assert {line.split(",")[1] for line in csv[1:]} <= {"keras-fit", "keras-fit-spe", "multi-step-loop"}


def test_history_labels_tell_alike_runs_apart():
    def row(run_id: str, when: str, host: str = "gpu-server"):
        result = make_result(run_id=run_id, started_at=when)
        result.host["hostname"] = host
        return history_row(result)

    rows = [
        row("aaaaaa1", "2026-11-30T08:00:00+00:00"),
        row("bbbbbb2", "2026-11-30T09:00:00+00:00"),
        row("cccccc3", "2026-11-30T09:00:00+00:00", host="laptop"),
        row("dddddd4", "2026-11-30T09:00:00+00:00", host="laptop"),
    ]
    labels = run_text.run_labels(rows)
    assert len(set(labels)) == 4
    assert labels[0] == f"GPU:0 on gpu-server · {run_text.short_time(rows[0].when)}"
    # Same place, same minute: the run id tells them apart (no minute that does not).
    assert labels[2] == "GPU:0 on laptop · cccccc"
    # One Run's two runs share their id's first 8 digits: their whole ids tell them apart (a legend had one colour).
    group = [row("5f1c2a9e-1", "2026-11-30T09:00:00+00:00"), row("5f1c2a9e-2", "2026-11-30T09:00:00+00:00")]
    assert run_text.run_labels(group) == ["GPU:0 on gpu-server · 5f1c2a9e-1", "GPU:0 on gpu-server · 5f1c2a9e-2"]


def test_markdown_in_an_imported_host_name_stays_text():
    evil = "![x](http://example.invalid/t.png) *bold* $x$ <b>"
    assert run_text.plain(evil) == "\\!\\[x\\](http\u2060://example.invalid/t.png) \\*bold\\* \\$x\\$ \\<b\\>"
    # A directive or emoji (:red[x], :smile:), an entity and the autolinks GFM finds after parsing (www.x, a@b):
    # escaped, or broken by an invisible word joiner. (The browser test reads it rendered: test_share_browser.py.)
    assert run_text.plain(":red[x] :smile: &lt; www.evil.example a@b.example") == (
        "\\:red\\[x\\] \\:smile: \\&lt; www\u2060.evil.example a\u2060@b.example"
    )
    assert run_text.plain("GPU:0 on gpu-server is 6.1× faster (median of epochs 2+).") == (
        "GPU:0 on gpu-server is 6.1× faster (median of epochs 2+)."
    )


def test_a_comparisons_two_runs_overlay_under_labels_that_say_what_differs_and_its_zip_imports_back():
    configs = [TrainConfig(**TINY, device="cpu", execution=e) for e in ("keras-fit", "multi-step-loop")]
    ids = live.submit_group(get_runner(), configs)
    assert all(get_runner().wait(i, 180).state == "completed" for i in ids)
    at = page("History")
    picker = at.multiselect(key="history_pick")
    options = [o for o in picker.options if any(i in o for i in ids)]
    assert len(options) == 2 and len(set(options)) == 2  # the picker's entries differ
    picker.set_value(ids).run()
    here = f"CPU:0 on {socket.gethostname()}"
    (race_spec, _), (_, time_rows) = chart_specs(at)
    series = [f"{here} (plain fit)", f"{here} (multi-step loop, XLA)"]
    assert encoding(race_spec)["color"]["scale"]["domain"] == series
    assert [r["series"] for r in time_rows].count(series[0]) == 2  # two epochs each, not four under one name
    (sentence,) = [m.value for m in at.markdown if m.value.startswith("#### ")]
    named = [s for s in series if run_text.plain(s) in sentence]
    assert len(named) == 2, sentence  # "X is 2.6x faster than X" named one run twice
    assert "Execution" in history_table(at).columns

    # The download of several runs is a .zip the uploader takes back: here, both are already in the history.
    (zipped,) = [b for b in at.download_button if b.label == "Download 2 runs · JSON"]
    uploader = at.file_uploader(key="history_upload")
    # One limit: the label's is the importer's, and so is the widget's (and the server's maxUploadSize).
    assert "at most 5 MiB" in uploader.label and uploader.proto.max_upload_size_mb * 2**20 == MAX_FILE_BYTES
    assert not uploader.proto.type or {".json", ".zip"} <= set(uploader.proto.type)
    data = archive.zip_files({f"run-{i}.json": get_store().export_json(i) for i in ids})
    uploader.set_value(("runs.zip", data, "application/zip")).run()
    assert [i.value for i in at.info] == [
        run_text.plain(f"Run {i} from {socket.gethostname()} is already in the history; nothing changed.") for i in ids
    ]
    assert not at.error and not at.exception
    del zipped


def test_a_zip_with_no_run_inside_says_so_in_one_sentence():
    at = page("History")
    empty = archive.zip_files({"notes.txt": "hello"})
    at.file_uploader(key="history_upload").set_value(("runs.zip", empty, "application/zip")).run()
    assert [e.value for e in at.error] == [
        run_text.plain("runs.zip: the .zip holds no .json file; it must hold run or sweep files (.json)")
    ]
    at.file_uploader(key="history_upload").set_value(("runs.zip", b"not a zip", "application/zip")).run()
    assert [e.value for e in at.error][0].startswith("runs.zip: this is not a readable .zip file")


def test_a_zip_of_many_runs_imports_each_and_picks_only_the_first_few_for_the_charts():
    at = page("History")
    files = dict(server_file(seed=100 + i) for i in range(9))
    data = archive.zip_files({f"run-{i}.json": text.decode() for i, text in files.items()})
    at.file_uploader(key="history_upload").set_value(("runs.zip", data, "application/zip")).run()
    assert all(get_store().get(i) is not None for i in files)
    assert len([s for s in at.success if s.value.startswith("Imported run server-")]) == 9
    assert at.multiselect(key="history_pick").value == list(files)[: history.MAX_PICKED]
    assert any(f"The first {history.MAX_PICKED} runs imported are picked" in i.value for i in at.info)
    assert not at.exception


def test_a_deleted_run_stays_deleted_when_the_next_file_is_uploaded():
    # The browser's uploader keeps every file chosen so far, each under its file id, and adds the next one to them.
    # AppTest's element forgets its files between runs, so the first file's entry (id included) is handed back.
    at = page("History")
    gone_id, gone = server_file(seed=11)
    next_id, nxt = server_file(seed=12)
    first = at.file_uploader(key="history_upload").upload("a.json", gone, "application/json")
    held = list(first._files)
    first.run()
    at.multiselect(key="history_pick").set_value([gone_id]).run()
    at.button(key="history_delete").click().run()
    at.button(key="history_delete_yes").click().run()
    assert get_store().get(gone_id) is None
    uploader = at.file_uploader(key="history_upload")
    uploader._files = held  # still holding a.json, as the page does
    uploader.upload("b.json", nxt, "application/json").run()
    assert get_store().get(next_id) is not None
    assert get_store().get(gone_id) is None  # not imported again from the uploader's first file
    assert any(next_id in s.value for s in at.success)
    assert not any(gone_id in s.value for s in at.success) and not at.exception


def test_pages_showing_the_same_runs_share_one_drawing_of_them(monkeypatch):
    # A room of viewers had each drawn the same runs' charts, headline and tables for itself (ui/draw_once.py).
    from ui import charts

    drew = []
    real = charts.race_chart
    monkeypatch.setattr(charts, "race_chart", lambda *a, **k: drew.append(1) or real(*a, **k))
    ids = []
    for seed in (21, 22):
        run_id, data = server_file(seed=seed)
        get_store().import_file(data)
        ids.append(run_id)
    pages = []
    for _ in range(3):  # three browser sessions, as three people would open History
        at = page("History")
        at.multiselect(key="history_pick").set_value(ids).run()
        pages.append(at)
    assert len(drew) == 1  # drawn by the first page, replayed to the other two
    specs = [chart_specs(at) for at in pages]
    assert specs[0] and specs[0] == specs[1] == specs[2]
    headlines = [[m.value for m in at.markdown if m.value.startswith("#### ")] for at in pages]
    assert headlines[0] and headlines[0] == headlines[1] == headlines[2]
