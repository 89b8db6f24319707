"""Presenter and viewers through AppTest: the token check, disabled controls that say why, and callbacks
that refuse a viewer even when called anyway (a hostile page can send any widget's value, disabled or not).

The server's token is $TFDASH_PRESENTER_TOKEN, read per session, so one process holds both roles: a
page opened with ?token=<it> presents, every other page views.
"""

from __future__ import annotations

import secrets

import pytest
from streamlit.testing.v1 import AppTest

from core.history.store import Store
from tests.conftest import wait_until
from tests.sample_runs import make_result
from tests.store_helpers import integrity_check
from tests.test_app import APP, page
from ui import access
from ui.resources import get_runner, get_store

TOKEN = secrets.token_urlsafe(24)


# -- the token check ------------------------------------------------------------------------------
def test_the_right_token_presents_and_a_wrong_or_missing_one_views():
    assert access.check(TOKEN, TOKEN).presenter
    wrong = access.check(TOKEN[:-1] + ("A" if TOKEN[-1] != "A" else "B"), TOKEN)
    assert not wrong.presenter and "the presenter's link has a token" in wrong.sentence
    for given in (None, "", TOKEN[:-1], TOKEN + "x", "é" * 32, TOKEN.upper() if TOKEN.upper() != TOKEN else "x"):
        said = access.check(given, TOKEN)
        assert not said.presenter and "ask the presenter" in said.sentence, given


def test_without_a_token_this_machine_presents_and_another_address_views():
    assert access.check(None, None) == access.Access(True, "")  # `make run`: as before, nothing said
    assert access.check("anything", None).presenter
    remote = access.check(None, None, remote_ip="192.0.2.7")  # only compared, never contacted
    assert not remote.presenter and "no presenter link" in remote.sentence


# -- pages ----------------------------------------------------------------------------------------
@pytest.fixture()
def shared(monkeypatch):
    """A `make share` server: its token in the environment, as ui/share.py passes it."""
    monkeypatch.setenv(access.TOKEN_ENV, TOKEN)


def open_as(token: str | None, view: str = "Train") -> AppTest:
    """A fresh browser session at ?token=`token` (None: the plain viewer URL), on `view`."""
    at = AppTest.from_file(APP, default_timeout=60)
    if token is not None:
        at.query_params[access.PARAM] = token
    return page(view, at.run())


def hostile_click(button):
    """What a hostile page sends: a click on a disabled button (AppTest refuses to, a hand-made client would not)."""
    button._value = True
    return button


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_a_viewer_sees_why_run_and_stop_are_off_and_clicking_anyway_starts_nothing(shared):
    viewer = open_as(None)
    assert "Viewer: every run shows here live" in captions(viewer)
    run, stop = viewer.button(key="run"), viewer.button(key="stop")
    assert run.disabled and stop.disabled
    assert "ask the presenter" in run.help and "ask the presenter" in stop.help
    before = len(get_runner().jobs())
    # Streamlit 1.67 drops a disabled widget's forged value before its callback; the callbacks' own
    # checks, for a forgery that gets past that, are tested below by calling them directly.
    viewer = hostile_click(run).run()
    assert len(get_runner().jobs()) == before and viewer.button(key="run").disabled


def test_a_wrong_token_is_a_viewer_and_the_right_one_presents_with_the_token_out_of_the_address(shared):
    wrong = open_as("not-the-token")
    assert "the presenter's link has a token" in captions(wrong) and wrong.button(key="run").disabled
    presenter = open_as(TOKEN)
    assert "Presenter:" in captions(presenter) and not presenter.button(key="run").disabled
    assert access.PARAM not in presenter.query_params  # read once, then taken out of the address bar
    assert presenter.session_state[access.KEY].presenter  # kept for the session, the token gone from the URL


def test_a_link_with_two_tokens_or_a_token_in_other_letters_is_a_viewer_and_loses_them(shared):
    # The last of ?token=nope&token=RIGHT had made a presenter; ?TOKEN= stayed in the address bar.
    for params in ({access.PARAM: ["not-the-token", TOKEN]}, {access.PARAM: [TOKEN, TOKEN]}, {"TOKEN": TOKEN}):
        at = AppTest.from_file(APP, default_timeout=60)
        for key, value in params.items():
            at.query_params[key] = value
        at = page("Train", at.run())
        assert not at.session_state[access.KEY].presenter and at.button(key="run").disabled
        assert not [k for k in at.query_params if k.lower() == access.PARAM]


def test_only_the_presenter_stops_a_run_and_every_page_says_who_did(shared, fashion_mnist):
    presenter, viewer = open_as(TOKEN), None
    presenter.number_input(key="epochs").set_value(200)
    presenter.number_input(key="train_subset").set_value(2000)
    presenter = presenter.run().button(key="run").click().run()
    ids = presenter.session_state["train"].ids
    runner = get_runner()
    wait_until(lambda: runner.status(ids[0]).done >= 1, 120, "epoch 1")  # an epoch in, so the stop keeps one
    viewer = open_as(None)
    assert viewer.button(key="stop").disabled
    viewer = hostile_click(viewer.button(key="stop")).run()  # the run goes on
    # A stop that got through would have asked at once (Runner.cancel names who asked before the run ends).
    first = runner.status(ids[0])
    assert first.state == "running" and all(runner.status(i).stopped_by is None for i in ids)
    presenter = presenter.run()
    assert not presenter.button(key="stop").disabled
    presenter = presenter.button(key="stop").click().run()
    runner.wait(ids[0], 30)
    for i in ids:
        runner.wait(i, 30)
    assert runner.status(ids[0]).state == "cancelled" and runner.status(ids[0]).stopped_by == "the presenter"
    mine, theirs = presenter.run(), viewer.run()
    assert "stopped by this page" in " ".join(m.value for m in mine.markdown)
    assert "stopped by the presenter" in " ".join(m.value for m in theirs.markdown)


def test_a_viewer_cannot_start_stop_delete_import_or_salvage_even_by_calling_the_callbacks(shared, tmp_path):
    stored = make_result(run_id="viewer-keep-1")
    get_store().finish(stored)
    damaged = tmp_path / "runs.sqlite3"
    Store(damaged).close()

    def hostile(run_id: str, data: str, damaged: str) -> None:
        import streamlit as st

        from core.settings.config import TrainConfig
        from ui import history, salvage, watcher
        from ui.resources import get_runner

        queued = len(get_runner().jobs())
        watcher.start("train", [TrainConfig(dataset="synthetic", epochs=1)])
        st.session_state.queued_after = len(get_runner().jobs()) - queued
        target = get_runner().submit(TrainConfig(dataset="synthetic", epochs=50, train_subset=2000))
        st.session_state.train = watcher.Watch([target], started_here=True)  # as if this page had started it
        watcher.stop("train")
        st.session_state.target = target

        class Chosen:  # what st.file_uploader hands the callback: a name and the bytes
            name = "run.json"

            def getvalue(self) -> bytes:
                return data.encode()

        st.session_state.history_upload = [Chosen()]
        history.on_upload()
        history.ask_delete([run_id])
        history.delete_runs([run_id])
        salvage.salvage(damaged)
        st.write(st.session_state.import_messages, st.session_state.confirm_delete, st.session_state.salvage_note)

    other = make_result(run_id="viewer-import-1")
    at = AppTest.from_function(hostile, args=("viewer-keep-1", other.to_json(), str(damaged)), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert get_store().get("viewer-keep-1") == stored  # not deleted
    assert get_store().get("viewer-import-1") is None  # not imported
    assert [p.name for p in tmp_path.iterdir()] == ["runs.sqlite3"]  # no salvaged copy written
    assert at.session_state["import_messages"] == [("error", access.DENIED)]
    assert at.session_state["confirm_delete"] is None
    assert at.session_state["salvage_note"] == ("error", access.DENIED)
    assert at.session_state["queued_after"] == 0 and at.session_state["start_error"] == access.DENIED
    target = get_runner().status(at.session_state["target"])
    try:
        assert target.state in ("queued", "running") and target.stopped_by is None  # not stopped by the viewer
    finally:
        get_runner().cancel(target.run_id, by="the test")
        get_runner().wait(target.run_id, 30)


def test_a_viewer_sees_history_with_delete_and_upload_off(shared):
    get_store().finish(make_result(run_id="viewer-view-1"))
    viewer = open_as(None, "History")
    viewer.multiselect(key="history_pick").set_value(["viewer-view-1"])
    viewer = viewer.run()
    delete = viewer.button(key="history_delete")
    assert delete.disabled and "ask the presenter" in delete.help
    assert len(viewer.get("download_button")) >= 2  # reading and downloading stay open to everyone
    (uploader,) = [u for u in viewer.get("file_uploader") if u.proto.id.endswith("history_upload")] or [None]
    if uploader is not None:
        assert uploader.proto.disabled


def test_the_presenter_salvages_a_damaged_history_into_a_new_file_beside_it(tmp_path):
    from tests.test_history_safety import damaged_history

    path, _ = damaged_history(tmp_path)
    error = "The run history cannot be read (database disk image is malformed)."

    def damaged_page(path: str, error: str) -> None:
        from ui import salvage

        salvage.salvage_ui(path, error)

    at = AppTest.from_function(damaged_page, args=(str(path), error), default_timeout=60).run()
    at = at.button(key="salvage").click().run()  # no token configured: this machine's page presents
    (said,) = [s.value for s in at.success]
    (new,) = [p for p in tmp_path.iterdir() if p.name.startswith("damaged-salvaged-")]
    assert said.startswith("Salvaged ") and "of the 32 results found" in said and f"TFDASH_DB={new}" in said
    with Store(new) as saved:
        assert integrity_check(saved) == "ok" and len(saved.history()) >= 25


def test_a_viewers_page_thread_runs_below_the_training_and_the_presenters_does_not(monkeypatch):
    import os
    import threading

    from ui import priority

    monkeypatch.setattr(priority, "ENABLED", True)  # as app.py sets it in a real server
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = {}

    def page_thread(viewer: bool) -> None:  # a page thread as the event loop starts it: at the server's priority
        priority.viewer_page(viewer)
        seen[viewer] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    for viewer in (True, False):
        thread = threading.Thread(target=page_thread, args=(viewer,))
        thread.start()
        thread.join()
    assert seen == {True: max(base, priority.RENDER_NICE), False: base}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # nothing else changed


def test_a_room_of_viewers_ticks_each_page_less_often_so_its_reruns_stay_those_of_a_small_room(monkeypatch):
    from ui import priority

    free = priority.ROOM_FREE
    monkeypatch.setattr(priority, "_viewers", {})
    for i in range(free):
        priority.seen(f"viewer-{i}", True, now=100.0)
    assert priority.viewers(now=100.0) == free and priority.stretch(now=100.0) == 1.0  # the full cadence
    for i in range(free, 3 * free):
        priority.seen(f"viewer-{i}", True, now=101.0)
    assert priority.stretch(now=101.0) == 3.0  # three times the room, each page a third as often
    priority.seen("viewer-0", False, now=101.0)  # it became the presenter's page: out of the room
    assert priority.viewers(now=101.0) == 3 * free - 1
    later = 101.0 + priority.GONE_S + 0.5  # nobody seen since: every page has left
    priority.seen("viewer-last", True, now=later)
    assert priority.viewers(now=later) == 1 and len(priority._viewers) == 1


def test_a_viewers_page_in_a_room_three_times_the_free_size_is_stretched_and_the_presenters_is_not(shared, monkeypatch):
    import time

    from ui import priority

    monkeypatch.setattr(priority, "_viewers", {})
    for i in range(3 * priority.ROOM_FREE - 1):  # the other viewers' pages; this one completes the room
        priority.seen(f"viewer-{i}", True, now=time.monotonic())
    viewer, presenter = open_as(None), open_as(TOKEN)
    assert viewer.session_state["live_page"].stretch == 3.0
    assert presenter.session_state["live_page"].stretch == 1.0
