"""`make share` in a real Chromium: the viewer URL and the presenter URL side by side.

The server is started as `make share` starts it (python -m ui.share: a new token in the environment, two
URLs printed), on 127.0.0.1 so nothing leaves this machine. The viewer's Run, Stop, Delete and Upload are
disabled; the presenter runs and stops a run, and the viewer sees it live and who stopped it.
"""

from __future__ import annotations

import datetime
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest
from playwright.sync_api import expect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from core.history.store import Store
from tests import st_client
from tests.conftest import ROOT, wait_until
from tests.sample_runs import make_result
from tests.test_browser import (  # noqa: F401
    ARTIFACTS,
    PROJECTOR,
    browser,
    free_port,
    pick_first,
    preset,
    screenshots_on_failure,
    status,
    view,
    wait_until_idle,
)
from ui import access

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """`python -m ui.share` on a free port of 127.0.0.1; yields (viewer URL, presenter URL, its output file).
    The output goes to a file of its own (no other server's, under pytest-xdist, can write into it)."""
    ARTIFACTS.mkdir(exist_ok=True)
    out_path = tmp_path_factory.mktemp("share") / "share.log"
    out = open(out_path, "w")  # noqa: SIM115 - closed when the server stops
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui.share", "--address", "127.0.0.1", "--port", str(free_port())],
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
        env=dict(os.environ),  # one warm worker, importing TensorFlow
    )
    try:

        def urls() -> list[str] | None:
            assert proc.poll() is None, f"make share exited: {out_path.read_text()[-2000:]}"
            found = re.findall(r"(http://\S+)", out_path.read_text())
            return found if len(found) >= 2 else None

        found = wait_until(urls, 90, "make share printing its two URLs", every=0.3)
        yield found[0], found[1], out_path
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()
    # Terminating `make share` ends its server too: nothing is left listening (or training) behind it.
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{found[0].replace('0.0.0.0', '127.0.0.1')}/_stcore/health", timeout=2)


def button(page, key: str):
    """The button keyed `key` (with a tooltip, Streamlit draws a second, hidden copy of it)."""
    return page.locator(f".st-key-{key} button").first


def open_page(browser, url: str):  # noqa: F811 - `browser` is test_browser's fixture
    page = browser.new_page(viewport=PROJECTOR)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(url)
    expect(page.get_by_role("button", name="Quick demo")).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    return page, errors


def test_the_viewer_watches_and_the_presenter_runs_and_stops(shared, browser, fashion_mnist, tmp_path):  # noqa: F811
    viewer_url, presenter_url, log = shared
    token = presenter_url.split("token=", 1)[1]
    assert "token=" not in viewer_url and len(token) >= 32
    viewer, viewer_errors = open_page(browser, viewer_url)
    presenter, presenter_errors = open_page(browser, presenter_url)
    expect(presenter).not_to_have_url(re.compile("token="), timeout=10_000)  # out of the address bar
    expect(viewer.get_by_text("Viewer: every run shows here live")).to_be_visible()
    expect(presenter.get_by_text("Presenter: this page starts and stops runs")).to_be_visible()
    presenter.reload()  # the token was seen once; the signed cookie keeps this browser the presenter
    expect(presenter.get_by_role("button", name="Quick demo")).to_be_visible(timeout=60_000)
    wait_until_idle(presenter)
    expect(presenter.get_by_text("Presenter: this page starts and stops runs")).to_be_visible()
    for key in ("run", "stop"):
        expect(button(viewer, key)).to_be_disabled()
    expect(button(presenter, "run")).to_be_enabled(timeout=120_000)  # once the workers wait ready
    wait_until_idle(presenter)  # Run's rerun over: a value typed during it can be lost with it
    # An out-of-range Epochs is said, and keeps Run off: never a silent, older value.
    epochs = presenter.get_by_role("spinbutton", name="Epochs")
    epochs.fill("1000000")
    epochs.press("Enter")
    expect(presenter.get_by_text("epochs must be from 1 to 1000, not 1000000.")).to_be_visible(timeout=30_000)
    expect(button(presenter, "run")).to_be_disabled()
    preset(presenter, "The tutorial")  # softmax on Fashion-MNIST, on CPU
    wait_until_idle(presenter)
    epochs.fill("200")  # long enough to be stopped half-way on any machine
    epochs.press("Enter")
    wait_until_idle(presenter)
    # Redrawn after the change; a busy machine. Twice in about seven full runs the presenter's page was blank here
    # (not a Streamlit element on it): say what the page and its console said, to find why.
    try:
        expect(button(presenter, "run")).to_be_enabled(timeout=30_000)
    except AssertionError:
        raise AssertionError(
            f"no Run after Epochs changed; console: {presenter_errors}; page: {presenter.content()[:600]!r}"
        ) from None
    button(presenter, "run").click()
    expect(status(presenter)).to_contain_text(re.compile(r"epoch ([3-9]|\d\d) of 200"), timeout=120_000)
    expect(status(viewer)).to_contain_text("Already running on this server", timeout=10_000)  # live, unasked
    expect(button(viewer, "stop")).to_be_disabled()
    viewer.screenshot(path=ARTIFACTS / "share-viewer-running.png")

    button(presenter, "stop").click()
    expect(status(presenter)).to_contain_text("stopped by this page", timeout=10_000)
    expect(status(viewer)).to_contain_text("stopped by the presenter", timeout=10_000)
    expect(status(viewer)).to_contain_text("stopped after")
    wait_until_idle(viewer)
    viewer.screenshot(path=ARTIFACTS / "share-viewer-stopped.png")
    presenter.screenshot(path=ARTIFACTS / "share-presenter-stopped.png")

    # History: the viewer may pick and download, not delete or import.
    run = make_result(run_id="share-upload-1")
    good, png, big = tmp_path / "run.json", tmp_path / "logo.png", tmp_path / "big.json"
    good.write_text(run.to_json())
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(2000))
    big.write_bytes(b"{" + b" " * 50_000_000 + b"}")
    view(viewer, "History")
    wait_until_idle(viewer)
    expect(viewer.locator('.st-key-history_upload input[type="file"]')).to_be_disabled()
    assert pick_first(viewer, "history_pick")  # the run the presenter stopped is there to pick
    viewer.keyboard.press("Escape")
    expect(button(viewer, "history_delete")).to_be_disabled(timeout=10_000)
    wait_until_idle(viewer)
    viewer.screenshot(path=ARTIFACTS / "share-viewer-history.png")

    # The presenter imports; each file chosen gets its own sentence, the last one's never left standing.
    view(presenter, "History")
    uploader = presenter.locator('.st-key-history_upload input[type="file"]')
    uploader.set_input_files(good)
    expect(presenter.get_by_text("Imported run share-upload-1")).to_be_visible(timeout=30_000)
    uploader.set_input_files(png)
    expect(presenter.get_by_text("logo.png: The file is not UTF-8 text")).to_be_visible(timeout=60_000)
    expect(presenter.get_by_text("Imported run share-upload-1")).to_have_count(0)
    # Over the importer's 5 MiB, the server's own limit (maxUploadSize) refuses it: the browser says so and sends
    # nothing, where the server had taken 64 MB files into its memory.
    uploader.set_input_files(big)
    expect(presenter.get_by_text(re.compile(r"File must be 5(\.0)? ?MB or smaller"))).to_be_visible(timeout=30_000)
    wait_until_idle(presenter)
    presenter.screenshot(path=ARTIFACTS / "share-presenter-upload.png")

    for page in (viewer, presenter):
        assert page.locator('[data-testid="stException"]').count() == 0
    assert viewer_errors == [] and presenter_errors == []
    assert log.read_text().count(token) == 1  # printed once, for the presenter; logged nowhere else


# -- issue 19: names, uploads, the token, text from files -------------------------------------------------------------
def address(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


def stored_ids() -> list[str]:
    with Store(os.environ["TFDASH_DB"]) as store:  # the server's own history file (conftest's TFDASH_DB)
        return sorted(r.run_id for r in store.history())


def test_under_another_host_name_the_page_and_its_websocket_are_refused_and_nothing_changes(shared):
    # DNS rebinding: attacker.example resolves to this machine, so its page is this server under another Host.
    viewer_url, presenter_url, _ = shared
    host, port = address(viewer_url)
    before = stored_ids()
    hostile = st_client.Session(presenter_url.split("/?")[0], host=f"attacker.example:{port}")
    assert hostile.get("/").status == 403 and hostile.get(f"/?{presenter_url.split('?')[1]}").status == 403
    with pytest.raises(st_client.Refused, match="403"):
        hostile.connect()
    raw = socket.create_connection((host, port))
    with pytest.raises(InvalidStatus, match="403"):  # Streamlit's own check, from server.allowedHosts
        connect(
            f"ws://attacker.example:{port}/_stcore/stream",
            sock=raw,
            subprotocols=["streamlit"],
            additional_headers={"Origin": f"http://attacker.example:{port}"},
        )
    for name in ("127.0.0.1", "localhost"):  # this machine's own names still work
        assert st_client.Session(viewer_url, host=f"{name}:{port}").get("/").status == 200
    assert stored_ids() == before


def test_only_the_presenters_page_may_upload(shared):
    viewer_url, presenter_url, _ = shared
    viewer = st_client.Session(viewer_url).connect()
    viewer.run()
    assert viewer.put_file("big.json", b"{" + b" " * 3_000_000 + b"}") == 403  # refused before its body is read
    presenter = st_client.Session(viewer_url)
    assert presenter.get(presenter_url[len(viewer_url) :]).status == 303  # the token, once: the cookie
    presenter.connect().run()
    assert "Presenter:" in presenter.page_text()
    assert presenter.put_file("run.json", make_result(run_id="upload-ok-1").to_json().encode()) == 204
    assert presenter.put_file("big.json", b" " * (6 * 2**20)) == 413  # over maxUploadSize, the importer's 5 MiB
    viewer.close()
    presenter.close()


def test_a_whole_number_no_browser_can_send_is_named_exactly_in_its_refusal(shared):
    # A hand-made page sends Epochs as a 64-bit whole number; Streamlit puts 0 there (ui.train_settings.watch).
    viewer_url, _, _ = shared
    page = st_client.Session(viewer_url).connect()
    page.run()
    for sent in (2**63 - 1, 2**53 + 1):
        page.run(widgets=st_client.set_number(page, "epochs", sent))
        assert f"epochs must be from 1 to 1000, not {sent}." in page.page_text()
    page.close()


def test_the_token_is_taken_once_and_only_alone_then_a_cookie_keeps_the_role_until_it_is_ended(shared, browser):  # noqa: F811
    viewer_url, presenter_url, _ = shared
    token = presenter_url.split("token=", 1)[1]
    page = st_client.Session(viewer_url)
    reply = page.get(f"/?token={token}&keep=1")
    assert reply.status == 303 and reply.headers["location"] == "/?keep=1"  # the token out, the rest kept
    cookie = next(c for c in reply.headers.get_all("set-cookie") if c.startswith(access.COOKIE))
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
    for query in (f"token=nope&token={token}", f"token={token}&token={token}", f"TOKEN={token}"):
        other = st_client.Session(viewer_url)
        reply = other.get(f"/?{query}")
        assert reply.status == 303 and reply.headers["location"] == "/" and access.COOKIE not in other.cookies
        other.connect().run()
        assert "Viewer:" in other.page_text() and "Presenter:" not in other.page_text()
        other.close()
    page.connect()
    run = page.run()
    assert "Presenter:" in page.page_text() and run.buttons["end_presenter"] is False
    ended = page.run(widgets=st_client.click(run, "end_presenter"))
    assert "presenter session of this browser has ended" in page.page_text() and ended.buttons["run"] is True
    page.close()
    again = st_client.Session(viewer_url, cookies={access.COOKIE: page.cookies[access.COOKIE]}).connect()
    again.run()  # the same cookie, on a new page: worthless now
    assert "Viewer:" in again.page_text()
    again.close()
    # In the browser: a token after '#' never reaches the server, so the page takes it out of the address itself.
    tab = browser.new_page(viewport=PROJECTOR)
    tab.goto(f"{viewer_url}/#token={token}")
    expect(tab.get_by_role("button", name="Quick demo")).to_be_visible(timeout=60_000)
    expect(tab).not_to_have_url(re.compile("token"), timeout=10_000)
    expect(tab.get_by_text("Viewer: every run shows here live")).to_be_visible()
    tab.close()


def test_text_from_a_file_is_shown_as_text_never_as_a_link_or_a_colour(shared, browser):  # noqa: F811
    viewer_url, _, _ = shared
    hostile = "www.evil.example :red[x] <b>bold</b> **strong** http://evil.example/a evil@evil.example"
    # Runs from a minute ago (a file from the future is refused), picked by id below.
    began = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=60)
    stamps = [(began + datetime.timedelta(seconds=s)).isoformat(timespec="milliseconds") for s in (0, 1, 10)]
    run = make_result(run_id="hostile-host-1", seed=7, started_at=stamps[0])
    run.host = {**run.host, "hostname": hostile}
    other = make_result(run_id="plain-host-1", seed=8, started_at=stamps[1])
    run.finished_at = other.finished_at = stamps[2]
    other.config = {**other.config, "batch_size": 100}
    with Store(os.environ["TFDASH_DB"]) as store:  # as an import would: the same checks, the same file
        for result in (run, other):
            store.import_file(result.to_json().encode())
    page, errors = open_page(browser, viewer_url)
    view(page, "History")
    wait_until_idle(page)
    for run_id in ("hostile-host-1", "plain-host-1"):  # by id: another test's runs may be newer
        pick_first(page, "history_pick", typed=run_id)
        page.keyboard.press("Escape")
        wait_until_idle(page)
    expect(page.locator("h4", has_text="faster than")).to_be_visible(timeout=30_000)  # the headline names the host
    page.screenshot(path=ARTIFACTS / "share-hostile-host.png")
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if "evil" in h and not h.startswith("#")], hrefs  # no autolink anywhere
    assert (
        page.locator(".stMarkdownColoredText").count() == 0 and page.locator("b, strong", has_text="bold").count() == 0
    )
    assert "www.evil.example :red[x] <b>bold</b>" in page.locator("h4", has_text="faster than").inner_text().replace(
        "\u2060", ""
    )
    assert errors == []
    page.close()


def test_a_viewers_page_in_a_large_room_is_asked_at_the_full_interval_and_holds_its_tick_for_the_stretched_one(shared):
    """A room of 3 * ROOM_FREE viewers' pages: each page draws its live text a third as often, yet its browser is
    told the unstretched interval, so a page just drawn whole asks again within it and a Stop then reaches it at once
    (bench/room.py: stop_seen_s), while a tick with nothing new holds until the stretched interval has passed."""
    from ui import priority, watcher

    viewer_url, _, _ = shared
    room = [st_client.Session(viewer_url).connect() for _ in range(3 * priority.ROOM_FREE)]
    try:
        for page in room:
            page.run()  # each page counted in the room (for GONE_S)
        page = room[-1]
        page.run()  # drawn whole again, now in the whole room: stretched at least 3 times
        ((fragment, every),) = page.fragments.items()
        assert every in (pytest.approx(watcher.TICK_S), pytest.approx(watcher.IDLE_TICK_S))  # unstretched (was 3 times)
        drawn = time.monotonic()
        tick = page.run(fragment=fragment, timeout=60)
        held = time.monotonic() - drawn
        assert tick.fragment and "Viewer:" in page.page_text()
        assert held >= 3 * every - 1.0, f"a tick with nothing new held {held:.1f} s, not its stretched interval"
    finally:
        for page in room:
            page.close()
