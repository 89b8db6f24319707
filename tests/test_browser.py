"""The dashboard in a real Chromium: `streamlit run` on a free port, driven with Playwright."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest
from playwright.sync_api import Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from core.machine import hardware_check
from core.settings import device_modes
from core.settings.presets import PRESETS
from tests.conftest import ROOT, require, wait_until
from tests.sample_runs import make_result

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "artifacts"
# Tall enough that the charts, both runs' metrics and the speedup below them are on one screen.
VIEWPORT = {"width": 1600, "height": 1496}
PROJECTOR = {"width": 1280, "height": 720}  # what a meetup's audience sees: screenshots of each view at this size
# The Quick demo's device mode without a GPU: plain model.fit against the multi-step loop, on the CPU.
DEMO_EPOCHS = PRESETS["Quick demo"]["epochs"]
FIT_CPU = next(m.label for m in device_modes.modes(hardware_check.Hardware(hardware_check.READY)) if m.key == "fit:cpu")
RUNNING = '[data-testid="stStatusWidget"]'  # the "running" indicator, present only while the script runs
# What tests/conftest.py sets for the pytest process's own runners that a served page must not inherit: its servers
# keep `make run`'s warm workers (one per run of a comparison). As the pytest process's, their warm-up imports
# TensorFlow only and a worker runs the next job too (TFDASH_WORKER_JOBS): the default, a fresh worker per job,
# is checked with real training in tests/test_worker.py (the server's memory after five runs) and tests/test_pool.py.
SERVER_KEEPS = ("TFDASH_WARM_WORKERS",)
# A module that sets SERVER_CHECKS_HARDWARE = True gets a server making its own hardware check, not the session's
# answer (tests/test_layout_browser.py watches the page wait for it); a check is 10-16 s of CPU.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str, proc: subprocess.Popen) -> bool:
    """Whether the server at `url` answers its health check; fails at once if its process has exited."""
    assert proc.poll() is None, "streamlit exited; see artifacts/streamlit.log"
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(request):
    """`streamlit run app.py` in a subprocess, as `make run` starts it (the page behind ui/guard.py); yields its URL."""
    drop = (
        *SERVER_KEEPS,
        *([hardware_check.ANSWER_ENV] if getattr(request.module, "SERVER_CHECKS_HARDWARE", 0) else []),
    )
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "streamlit.log", "w")  # closed when the server stops
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if k not in drop},  # the page's own warm workers
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: healthy(url, proc), 60, "streamlit's answer", every=0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    require(os.access(CHROMIUM, os.X_OK), "Chromium (apt-get install chromium)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def screenshots_on_failure(request, browser):
    """A failed test leaves every page it had open in artifacts/failed-TEST-N.png, to read what it showed; then
    every page a test left open is closed: a page left open reruns with the next test's runs (Chromium's renderer
    took half a core for one page open on a Quick demo here)."""
    yield
    pages = [p for context in browser.contexts for p in context.pages]
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        for i, page in enumerate(pages):
            page.screenshot(path=ARTIFACTS / f"failed-{request.node.name}-{i}.png", full_page=True)
    for page in pages:
        page.close()


def open_page(browser, url: str) -> tuple[Page, list[str]]:
    """A new session's page, and the list its console errors and page errors go to."""
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []

    # Any console error fails the test (what the model learned is drawn from inline images: ui/learned.py).
    def on_console(msg) -> None:
        if msg.type == "error":
            errors.append(msg.text)

    page.on("console", on_console)
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("crash", lambda _: errors.append("the page crashed (Chromium's renderer died)"))
    page.goto(url)
    expect(page.get_by_role("button", name="Quick demo")).to_be_visible(timeout=60_000)
    return page, errors


# Counts the page's script runs that ended (Streamlit's own e2e tests read this attribute): a tick's too.
COUNT_ENDS = """() => {
  if (window.__runsEnded === undefined) {
    window.__runsEnded = 0;
    new MutationObserver(changes => changes.forEach(c => {
      if (c.target.getAttribute(c.attributeName) === "notRunning" && c.oldValue !== "notRunning") window.__runsEnded++;
    })).observe(document.body, {subtree: true, attributes: true, attributeOldValue: true,
                                attributeFilter: ["data-test-script-state"]});
  }
  return window.__runsEnded;
}"""


def wait_until_idle(page: Page, timeout: float = 60) -> None:
    """Until the script has stopped running for a whole second (a rerun may follow a stop), or two of its runs ended
    since this wait began: a whole-page rerun asked before it has ended by then, as a tick asked later runs after it.
    A viewer's ticks hold while they wait on the runner (ui/viewer_wait.py): under load its idle second rarely came."""
    began, quiet_since = page.evaluate(COUNT_ENDS), []

    def quiet() -> bool:
        if page.evaluate(COUNT_ENDS) - began >= 2:
            return True
        if page.locator(RUNNING).count():
            quiet_since.clear()
            return False
        quiet_since[:] = quiet_since or [time.monotonic()]
        return time.monotonic() - quiet_since[0] >= 1.0

    wait_until(quiet, timeout, "a second with the script idle, or two runs ended", every=0.1)


def status(page: Page):
    """The status line next to Run and Stop."""
    return page.locator('.st-key-train_status [data-testid="stMarkdownContainer"] strong').first


def view(page: Page, name: str) -> None:
    """Switch to a view with the navigation bar at the top, as a person would."""
    page.get_by_test_id("stTopNav").get_by_role("link", name=name).click()  # not a page link of the view
    path = "" if name == "Train" else name.lower()  # the default view is the app's root
    expect(page).to_have_url(re.compile(f"/{path}(\\?.*)?$"), timeout=10_000)  # Train's settings may follow


def preset(page: Page, name: str) -> None:
    """Click a preset once, as a person would, and see its Epochs before pressing Run.

    Once, whatever else is under way: a click that lands on a rerun of the live fragment or of the GPU
    check's answer is never lost (ui.train_settings.apply_preset; tests/test_layout_browser.py clicks at
    the moment the check answers).
    """
    epochs = str(PRESETS[name]["epochs"])
    page.get_by_role("button", name=name).click(timeout=60_000)
    expect(page.get_by_role("spinbutton", name="Epochs")).to_have_value(epochs, timeout=20_000)


def click(page: Page, key: str) -> None:
    """Click the enabled button keyed `key`: mid-rerun, a page may still hold the previous run's copy too."""
    page.locator(f".st-key-{key} button:enabled").first.click(timeout=60_000)


def pick_first(page: Page, key: str, timeout: float = 90, typed: str = "") -> str:
    """Open the multiselect keyed `key` and pick its first option, as a person would; returns the option's text.
    typed: words typed into the widget first, so the list holds only the options that contain them (a long
    history's list shows only its first options, and other tests' newer runs come first).

    A rerun (a run finishing, a fragment's tick) may redraw the widget and close its list between the
    click and the pick, so a list that is not open within a few seconds is opened again.
    """
    deadline = time.monotonic() + timeout
    while True:
        field = page.locator(f".st-key-{key} input").first
        field.click(timeout=60_000)
        if typed:
            field.press_sequentially(typed)
        option = page.get_by_role("option").filter(has_text=typed).first
        try:
            option.wait_for(state="visible", timeout=5_000)
            text = option.inner_text()
            option.click(timeout=5_000)
            if typed:  # a rerun that redrew the widget as the click landed leaves nothing picked: again
                page.locator(f".st-key-{key}").filter(has_text=text).wait_for(timeout=5_000)
            return text
        except PlaywrightTimeoutError:
            assert time.monotonic() < deadline, f"the list of {key} never opened with an option {typed!r} in it"
            page.keyboard.press("Escape")


def choose(page: Page, key: str, option: str, timeout: float = 60) -> None:
    """Choose `option` in the selectbox keyed `key`, as a person would: again if a rerun redrew it as the click
    landed."""
    deadline = time.monotonic() + timeout
    field = page.locator(f".st-key-{key} input").first
    while True:
        field.click(timeout=30_000)
        try:
            page.get_by_role("option", name=option).click(timeout=5_000)
            expect(field).to_have_value(option, timeout=5_000)  # the chosen option is the field's value
            return
        except (PlaywrightTimeoutError, AssertionError):
            assert time.monotonic() < deadline, f"{option!r} could not be chosen in {key}"
            page.keyboard.press("Escape")


def quick_demo_shows_both_charts_and_the_metrics(page: Page, epochs: int = DEMO_EPOCHS) -> None:
    """After a Quick demo ran to its end on this page (no GPU here: plain model.fit, the multi-step loop, then XLA on
    it, all on the CPU; tests/test_layout_browser.py runs it, then tours the other views): back on Train, the settings
    and the runs as they were, its charts, numbers and headline. One demo's run serves both tests, as it takes a minute
    of the suite's time on 2 cores."""
    view(page, "Train")
    wait_until_idle(page)
    # The settings survive the trip: still the Quick demo's, and the runs still shown.
    expect(page.get_by_role("spinbutton", name="Epochs")).to_have_value(str(epochs), timeout=10_000)
    page.set_viewport_size(VIEWPORT)
    expect(status(page)).to_contain_text(f"CPU (multi-step loop, XLA): done, {epochs} epochs", timeout=120_000)
    expect(status(page)).to_contain_text(f"CPU (plain fit): done, {epochs} epochs")
    expect(status(page)).to_contain_text(f"CPU (multi-step loop): done, {epochs} epochs")
    charts = page.locator('.st-key-run_charts [data-testid="stVegaLiteChart"]:visible')
    expect(charts).to_have_count(2, timeout=30_000)
    for i in range(2):
        expect(charts.nth(i).locator("canvas, svg").first).to_be_visible(timeout=30_000)
    # The runs' numbers (the table of what each change bought sits above it).
    numbers = page.locator('[data-testid="stMarkdownContainer"] table:visible').filter(has_text="Final test accuracy")
    steps = page.locator('[data-testid="stMarkdownContainer"] table:visible').filter(has_text="Speedup over the run")
    expect(steps.locator("tbody tr")).to_have_count(3)
    expect(numbers.first.locator("thead th")).to_have_count(4)  # a column per run, after the figures' names
    expect(page.get_by_text("CPU (multi-step loop, XLA) is ")).to_be_visible()
    wait_until_idle(page)

    assert page.locator('[data-testid="stException"]').count() == 0
    figures = {}
    for row in numbers.first.locator("tbody tr").all():
        name, *cells = [c.inner_text() for c in row.locator("td").all()]
        figures[name] = cells
    shown = ("Final test accuracy", "Steady epoch (mean of 2+)", "Warm-up cost", "Samples / s", "GFLOP/s")
    assert set(shown) | {"Share of peak", "Variables on", "XLA (jit_compile)"} <= set(figures), figures
    # The headline agrees with the table beside it: its ratio within 10% of the steady epochs' and of the samples/s.
    headline = page.get_by_text("CPU (multi-step loop, XLA) is ").first.inner_text()
    ratio = float(re.search(r" is ([0-9.]+)× (faster|slower) ", headline).group(1))
    ratio = ratio if " faster " in headline else 1 / ratio
    runs = [c.inner_text() for c in numbers.first.locator("thead th").all()][1:]
    # The headline: the first arm (plain fit) against the last (the loop with XLA); the table shows the step between.
    column = {"loop": runs.index("CPU (multi-step loop, XLA)"), "fit": runs.index("CPU (plain fit)")}
    epoch = {k: float(figures["Steady epoch (mean of 2+)"][i].rstrip(" s")) for k, i in column.items()}
    rate = {k: float(figures["Samples / s"][i].replace(",", "")) for k, i in column.items()}
    assert abs(ratio / (epoch["fit"] / epoch["loop"]) - 1) < 0.10, (headline, epoch)
    assert abs(ratio / (rate["loop"] / rate["fit"]) - 1) < 0.10, (headline, rate)
    # Run is offered again once the next workers wait ready (a Run pressed then starts at once).
    expect(page.locator(".st-key-run button:enabled")).to_have_count(1, timeout=120_000)
    shot = ARTIFACTS / "quick-demo.png"
    page.screenshot(path=shot)
    if os.environ.get("UPDATE_SCREENSHOT") == "1":  # the README's picture, refreshed on purpose only
        shutil.copyfile(shot, ROOT / "docs" / "screenshot.png")

    page.set_viewport_size(PROJECTOR)
    page.screenshot(path=ARTIFACTS / "720p-train.png")
    assert page.locator('[data-testid="stException"]').count() == 0


def test_stop_keeps_finished_epochs_and_a_second_session_is_told_it_waits(server, browser, fashion_mnist):
    presenter, presenter_errors = open_page(browser, server)
    wait_until_idle(presenter)
    preset(presenter, "The tutorial")
    wait_until_idle(presenter)
    # Plain model.fit and the multi-step loop, taking turns epoch by epoch: slow enough to stop and to queue behind.
    presenter.get_by_text(FIT_CPU).click()
    wait_until_idle(presenter)
    click(presenter, "run")
    expect(status(presenter)).to_contain_text("CPU (plain fit): epoch 2 of 10", timeout=120_000)
    # Both have finished an epoch (the loop's first comes after the fit's, in its turn): Stop now ends both after one.
    expect(status(presenter)).to_contain_text("CPU (multi-step loop, XLA): epoch 2 of 10", timeout=120_000)

    viewer, viewer_errors = open_page(browser, server)
    # The fit may be measuring its step after epoch 1 right then (its status says so) or training an epoch.
    running = re.compile(r"Already running on this server: CPU \(plain fit\): (epoch|measuring the step)")
    expect(status(viewer)).to_contain_text(running)
    # The viewer's live fragment reruns while the presenter's run goes on: wait for the preset to
    # show, or a quick Run click can be merged into the preset's rerun and lost.
    preset(viewer, "Quick demo")
    expect(viewer.get_by_role("radio", name=FIT_CPU)).to_be_checked(timeout=10_000)
    click(viewer, "run")
    expect(status(viewer)).to_contain_text("Waiting: another session is training softmax on CPU, epoch", timeout=30_000)

    # Our Stop (keyed "stop"), not Streamlit's own "Stop" in the header, which only stops the script.
    click(presenter, "stop")
    clicked = time.monotonic()
    # Stop ends the run within a second or two (bench-free: the bound is only a generous ceiling for a
    # loaded 2-core CI machine; the time it took is printed for the log).
    expect(status(presenter)).to_contain_text("CPU (plain fit): stopped after", timeout=20_000)
    print(f"stop took {time.monotonic() - clicked:.2f} s")
    expect(status(presenter)).to_contain_text("CPU (multi-step loop, XLA): stopped after")  # it took turns: both ran
    # The finished epochs stay on the page.
    expect(presenter.locator('.st-key-run_charts [data-testid="stVegaLiteChart"]:visible')).to_have_count(2)

    # The waiting session runs as soon as the runner is free: its first epoch ends, then its own Stop ends it (a whole
    # demo to its end is tests/test_layout_browser.py's).
    expect(status(viewer)).to_contain_text("CPU (plain fit): epoch 2 of", timeout=120_000)
    click(viewer, "stop")
    expect(status(viewer)).to_contain_text("CPU (plain fit): stopped after", timeout=20_000)
    for page in (presenter, viewer):
        assert page.locator('[data-testid="stException"]').count() == 0
    assert presenter_errors == [] and viewer_errors == []


def test_a_server_run_uploaded_in_history_is_overlaid_and_a_second_upload_changes_nothing(server, browser, tmp_path):
    run_file = tmp_path / "gpu-run.json"
    run_file.write_text(make_result(run_id="browser-upload-1").to_json())
    bad_file = tmp_path / "bad.json"
    bad_file.write_text('{"schema_version": 1}')
    page, errors = open_page(browser, server)
    wait_until_idle(page)
    view(page, "History")
    uploader = page.locator('.st-key-history_upload input[type="file"]')

    uploader.set_input_files(run_file)
    expect(page.get_by_text("Imported run browser-upload-1 from gpu-server (GPU:0, completed).")).to_be_visible(
        timeout=30_000
    )
    # Picked at once: its two charts and its metrics are drawn in the History tab.
    charts = page.locator('.st-key-run_charts [data-testid="stVegaLiteChart"]:visible')
    expect(charts).to_have_count(2, timeout=30_000)
    numbers = page.locator('[data-testid="stMarkdownContainer"] table:visible').first  # a column per run
    expect(numbers.locator("thead th").last).to_have_text("GPU:0 on gpu-server")
    expect(numbers.locator("tbody tr", has_text="Variables on")).to_contain_text("GPU:0")

    # The same run again, say a copy sent twice: the browser sends it, the history keeps one.
    again = tmp_path / "gpu-run (1).json"
    again.write_bytes(run_file.read_bytes())
    uploader.set_input_files(again)
    # The uploader keeps the files chosen before, so each one's sentence may be on screen: look at the newest.
    expect(
        page.get_by_text("Run browser-upload-1 from gpu-server is already in the history; nothing changed.").last
    ).to_be_visible(timeout=60_000)
    uploader.set_input_files(bad_file)
    expect(page.get_by_text("bad.json: The file is missing the field").last).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert errors == []
    page.close()


def test_make_run_answers_only_this_machines_names(server):
    # DNS rebinding: a page at attacker.example, resolving to 127.0.0.1, had the presenter's role on `make run`.
    from tests import st_client

    port = urllib.parse.urlsplit(server).port
    for name in ("attacker.example", "127.0.0.1.attacker.example", "[::2]"):
        hostile = st_client.Session(server, host=f"{name}:{port}")
        assert hostile.get("/").status == 403
        with pytest.raises(st_client.Refused):
            hostile.connect()
    for name in ("127.0.0.1", "localhost", "[::1]"):  # what a person on this machine types
        page = st_client.Session(server, host=f"{name}:{port}").connect()
        page.run()
        assert "Queue" in page.page_text() and "Viewer" not in page.page_text()  # the presenter's page, as before
        page.close()


def test_a_two_value_precision_comparison_runs_side_by_side(server, browser, fashion_mnist):
    page, errors = open_page(browser, server)
    wait_until_idle(page)
    preset(page, "Quick demo")
    wait_until_idle(page)
    # Compare along precision: its starting pair (float32, mixed_bfloat16) on the Device choice's CPU.
    choose(page, "axis", "Precision")
    wait_until_idle(page)
    expect(page.locator(".st-key-axis_choices")).to_contain_text("mixed_bfloat16", timeout=30_000)
    # Two epochs (one steady) of 6,000 images make the comparison; bfloat16 on a CPU is slow, and the demo's six
    # epochs of 30,000 are the layout test's.
    page.get_by_role("spinbutton", name="Epochs").fill("2")
    page.get_by_role("spinbutton", name="Epochs").press("Enter")
    expect(page.get_by_role("spinbutton", name="Epochs")).to_have_value("2")
    wait_until_idle(page)
    page.get_by_text("Advanced", exact=True).click()
    samples = page.get_by_role("spinbutton", name="Training samples (0 = the whole set)")
    samples.fill("6000")
    samples.press("Enter")
    expect(samples).to_have_value("6000")
    wait_until_idle(page)
    click(page, "run")
    expect(status(page)).to_contain_text("CPU (mixed_bfloat16): done, 2 epochs", timeout=180_000)
    expect(status(page)).to_contain_text("CPU (float32): done, 2 epochs")
    charts = page.locator('.st-key-run_charts [data-testid="stVegaLiteChart"]:visible')
    expect(charts).to_have_count(2, timeout=30_000)
    expect(
        page.get_by_text(re.compile(r"(float32|mixed_bfloat16) is .* (faster|slower) than .* on CPU"))
    ).to_be_visible()
    wait_until_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert errors == []
    page.screenshot(path=ARTIFACTS / "compare-precision.png")
    page.close()
