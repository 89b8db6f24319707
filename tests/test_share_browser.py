"""`make share` in a real Chromium: the viewer URL and the presenter URL side by side.

The server is started as `make share` starts it (python -m ui.share: a new token in the environment, two
URLs printed), on 127.0.0.1 so nothing leaves this machine. The viewer's Run, Stop, Delete and Upload are
disabled; the presenter runs and stops a run, and the viewer sees it live and who stopped it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.conftest import ROOT
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

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shared():
    """`python -m ui.share` on a free port of 127.0.0.1; yields (viewer URL, presenter URL, its output file)."""
    ARTIFACTS.mkdir(exist_ok=True)
    out_path = ARTIFACTS / "share.log"
    out = open(out_path, "w")  # noqa: SIM115 - closed when the server stops
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui.share", "--address", "127.0.0.1", "--port", str(free_port())],
        cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not (found := re.findall(r"(http://\S+)", out_path.read_text())) or len(found) < 2:
            assert proc.poll() is None, "make share exited; see artifacts/share.log"
            assert time.monotonic() < deadline, "make share printed no URLs within 90 s"
            time.sleep(0.3)
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
    for key in ("run", "stop"):
        expect(button(viewer, key)).to_be_disabled()
    expect(button(presenter, "run")).to_be_enabled(timeout=120_000)  # once the workers wait ready

    # An out-of-range Epochs is said, and keeps Run off: never a silent, older value.
    epochs = presenter.get_by_role("spinbutton", name="Epochs")
    epochs.fill("1000000")
    epochs.press("Enter")
    expect(presenter.get_by_text("epochs must be from 1 to 1000, not 1000000.")).to_be_visible(timeout=10_000)
    expect(button(presenter, "run")).to_be_disabled()
    preset(presenter, "The tutorial")  # softmax on Fashion-MNIST, on CPU
    wait_until_idle(presenter)
    epochs.fill("200")  # long enough to be stopped half-way on any machine
    epochs.press("Enter")
    wait_until_idle(presenter)
    expect(button(presenter, "run")).to_be_enabled()
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
    for chosen, said in ((png, "logo.png: The file is not UTF-8 text"), (big, "big.json: The file is 50,000,002")):
        uploader.set_input_files(chosen)
        expect(presenter.get_by_text(said)).to_be_visible(timeout=60_000)
        expect(presenter.get_by_text("Imported run share-upload-1")).to_have_count(0)
    wait_until_idle(presenter)
    presenter.screenshot(path=ARTIFACTS / "share-presenter-upload.png")

    for page in (viewer, presenter):
        assert page.locator('[data-testid="stException"]').count() == 0
    assert viewer_errors == [] and presenter_errors == []
    assert log.read_text().count(token) == 1  # printed once, for the presenter; logged nowhere else
