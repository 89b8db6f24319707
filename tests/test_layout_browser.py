"""The page on a projector, in a real Chromium: what must be on screen at 1280x720 (and 1920x1080), that nothing
moves when runs end, what the page says it compares, prepared links, and nothing cut at 1024x768 either.

Screenshots go to artifacts/ (layout-*.png): look at them.
"""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from tests import chart_boxes
from tests.test_browser import (  # noqa: F401
    ARTIFACTS,
    DEMO_EPOCHS,
    FIT_CPU,
    browser,
    click,
    open_page,
    pick_first,
    preset,
    quick_demo_shows_both_charts_and_the_metrics,
    screenshots_on_failure,
    server,
    status,
    view,
    wait_until_idle,
)

pytestmark = pytest.mark.browser
SERVER_CHECKS_HARDWARE = True  # its server makes its own hardware check: the stage test watches the page wait for it

SIZES = {"720p": {"width": 1280, "height": 720}, "xga": {"width": 1024, "height": 768}}
FULL_HD = {"width": 1920, "height": 1080}
CHARTS = '.st-key-run_charts [data-testid="stVegaLiteChart"]:visible'  # the two live charts, not the roofline's
# Text that must never be cut: every visible element with text of its own, in the page's main area and sidebar.
OVERFLOWING = """
() => {
  const found = [];
  const roots = document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebar"]');
  for (const root of roots) {
    for (const el of root.querySelectorAll('p, span, td, th, code, button, label, h1, h2, h3, h4, small')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || !el.textContent.trim()) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      // Scrolling containers (the table, the code block) are judged by their own rule below.
      if (['auto', 'scroll'].includes(style.overflowX)) continue;
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
        found.push(el.tagName + ': ' + el.textContent.trim().slice(0, 60));
    }
    // A table or code block that scrolls sideways hides text behind the scroll bar.
    for (const el of root.querySelectorAll('pre, [data-testid="stMarkdownContainer"] table')) {
      if (el.scrollWidth > el.clientWidth + 1) found.push('scrolls: ' + el.textContent.trim().slice(0, 60));
    }
  }
  return found;
}
"""


# Text Vega drew past its chart's edge: a title, axis label or legend entry cut where the chart's SVG ends
# (an SVG clips what does not fit, which the text rule above cannot see).
CUT_IN_CHARTS = """
() => {
  const found = [];
  for (const svg of document.querySelectorAll('[data-testid="stMain"] [data-testid="stVegaLiteChart"] svg')) {
    const edge = svg.getBoundingClientRect();
    if (edge.width === 0) continue;
    for (const text of svg.querySelectorAll('text')) {
      const box = text.getBoundingClientRect();
      if (!text.textContent.trim() || box.width === 0) continue;
      // 4 px of slack: a rotated axis title's box reaches 3 px past the edge by its line height, not its ink.
      if (box.right > edge.right + 4 || box.left < edge.left - 4)
        found.push(text.textContent.trim().slice(0, 60) + ' (' + Math.round(box.left - edge.left) + '-'
                   + Math.round(box.right - edge.left) + ' px of ' + Math.round(edge.width) + ')');
    }
  }
  return found;
}
"""
CHART_TEXTS = (
    """() => document.querySelectorAll('[data-testid="stMain"] [data-testid="stVegaLiteChart"] svg text').length"""
)


def inside(page: Page, selector: str) -> list[str]:
    """The elements matching `selector` whose boxes are not wholly inside the viewport."""
    size = page.viewport_size
    out = []
    for i in range(page.locator(selector).count()):
        box = page.locator(selector).nth(i).bounding_box()
        if (
            box is None
            or box["y"] < 0
            or box["x"] < 0
            or box["y"] + box["height"] > size["height"] + 1
            or box["x"] + box["width"] > size["width"] + 1
        ):
            out.append(f"{selector}[{i}]: {box}")
    return out


def top(page: Page, selector: str) -> float:
    """The top of the first element `selector` finds, in px from the page's top (not the window's)."""
    return page.locator(selector).first.bounding_box()["y"] + page.evaluate("() => window.scrollY")


# The most lines any cell of the page's Markdown tables (the runs' numbers) takes: the Run column had wrapped over 6.
TABLE_LINES = """
() => Math.max(0, ...[...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"] td, '
    + '[data-testid="stMain"] [data-testid="stMarkdownContainer"] th')].map((cell) => {
  const style = getComputedStyle(cell), line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
  return Math.round((cell.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)) / line);
}))
"""
HEADLINE = ".st-key-headline"
RUN_EPOCHS = 3  # of the Quick demo's DEMO_EPOCHS
STATUS = ".st-key-train_status"
MAIN = '[data-testid="stMain"]'


def test_on_stage_the_status_headline_and_charts_fit_1280x720_move_early_and_stay_put(server, browser, fashion_mnist):  # noqa: F811
    page, errors = open_page(browser, server)  # the module's first page: the GPU check is still out
    page.set_viewport_size(SIZES["720p"])
    main = page.locator(MAIN)
    # The main area says what it is waiting for, then what it compares, in words (no GPU here).
    expect(main.get_by_text("Checking for GPUs…")).to_be_visible(timeout=30_000)
    # The preset click lands at the moment the check answers (its whole-page rerun): once, and it holds.
    expect(main.get_by_text("Checking for GPUs…")).to_have_count(0, timeout=120_000)
    preset(page, "Quick demo")
    page.wait_for_timeout(1500)
    expect(page.get_by_role("spinbutton", name="Epochs")).to_have_value(str(DEMO_EPOCHS))
    expect(page.get_by_role("radio", name=FIT_CPU)).to_be_checked()
    said = "No GPU on this machine: one change at a time on the CPU, each run against the one before."
    expect(main.get_by_text(said)).to_be_visible()
    expect(page.get_by_role("heading", name="TensorFlow: plain fit → multi-step loop → XLA, live")).to_be_visible()
    # Three of the demo's epochs: two steady ones make the headline every check below reads, in half the training
    # (the suite's longest test; bench/first_run.py and bench/headline_stability.py press the whole demo).
    epochs = page.get_by_role("spinbutton", name="Epochs")
    epochs.fill(str(RUN_EPOCHS))
    epochs.press("Enter")
    wait_until_idle(page)
    # Run is offered once the workers wait with TensorFlow imported; clicked the moment it is (that rerun), it runs.
    page.locator(".st-key-run button:enabled").first.click(timeout=120_000)
    expect(status(page)).to_contain_text("CPU (plain fit): ", timeout=10_000)

    # During the run, at 1280x720 with the sidebar open: the status line, the headline's place and both charts.
    expect(page.locator(CHARTS)).to_have_count(2, timeout=120_000)
    # Each run's seconds of measuring after its epoch 1 are said, in words short enough to keep the charts in view.
    expect(status(page)).to_contain_text("measuring the step", timeout=60_000)
    page.screenshot(path=ARTIFACTS / "layout-720p-measuring.png")
    assert inside(page, CHARTS) == [], "the measuring line pushed a chart below the fold at 1280x720"
    expect(status(page)).to_contain_text("epoch", timeout=30_000)
    page.wait_for_timeout(1500)  # the charts' canvases drawn
    page.screenshot(path=ARTIFACTS / "layout-720p-running.png")
    assert chart_boxes.svg_count(page) == 2 and chart_boxes.covered(page) == [], "a word covers the live charts' data"
    assert page.evaluate("() => window.scrollY") == 0
    assert inside(page, CHARTS) == [], "a chart is below the fold at 1280x720"
    assert inside(page, STATUS) == [] and inside(page, HEADLINE) == []
    # Streamlit's own header Stop (it stops only the script, freezing the page) is not there to press.
    assert page.locator('[data-testid="stStatusWidget"] button:visible').count() == 0
    # A second page watching: the watched runs' settings beside their charts, not its own sidebar's (the tutorial).
    watcher, watcher_errors = open_page(browser, server)
    expect(
        watcher.get_by_text(
            "Another page's runs, with their settings: MLP (128 hidden units), Fashion-MNIST "
            f"(30,000 training images), {RUN_EPOCHS} epochs"
        )
    ).to_be_visible(timeout=20_000)
    expect(watcher.get_by_role("spinbutton", name="Epochs")).to_have_value("10", timeout=20_000)
    expect(watcher.get_by_role("heading", name="TensorFlow: plain fit → multi-step loop → XLA, live")).to_be_visible()
    watcher.close()
    where = {s: top(page, s) for s in (STATUS, HEADLINE, CHARTS)}

    expect(status(page)).to_contain_text(f"CPU (multi-step loop, XLA): done, {RUN_EPOCHS} epochs", timeout=120_000)
    wait_until_idle(page)
    # Nothing moved when the runs ended, and the headline, now said, is on screen.
    assert {s: top(page, s) for s in where} == pytest.approx(where, abs=1), "the page moved when the runs ended"
    expect(page.locator(HEADLINE)).to_contain_text("faster than")
    assert inside(page, HEADLINE) == [] and inside(page, CHARTS) == [], "the headline or a chart is off screen"
    heights = {}
    for name, size in (("720p", SIZES["720p"]), ("1080p", FULL_HD)):
        page.set_viewport_size(size)
        page.wait_for_timeout(1000)
        assert inside(page, HEADLINE) == [] and inside(page, CHARTS) == [] and inside(page, STATUS) == [], size
        heights[name] = page.locator(CHARTS).first.bounding_box()["height"]
        page.screenshot(path=ARTIFACTS / f"layout-{name}-done-screen.png")
    assert heights["1080p"] > heights["720p"] + 150, f"the charts do not grow with the window: {heights}"
    page.set_viewport_size(SIZES["720p"])
    page.wait_for_timeout(1000)
    # No legend or label covers a mark, against the clock and per epoch; no cell of the numbers wraps past 2 lines.
    assert chart_boxes.covered(page) == [], "a word covers the race's or the epochs' data at 1280x720"
    page.locator(".st-key-accuracy_x button").nth(1).click()
    wait_until_idle(page)
    page.wait_for_timeout(1000)
    page.screenshot(path=ARTIFACTS / "layout-720p-per-epoch.png")
    assert chart_boxes.covered(page) == [], "a word covers the per-epoch accuracy's data at 1280x720"
    page.locator(".st-key-accuracy_x button").nth(0).click()
    wait_until_idle(page)
    assert page.evaluate(TABLE_LINES) <= 2, "a cell of the runs' numbers wraps past two lines at 1280x720"

    # Charts as TensorBoard users read them: every run at one x under the pointer, a full-screen view of each.
    race = page.locator(CHARTS).first
    box = race.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.6)  # in the plot, under its legend
    tooltip = page.locator("#vg-tooltip-element")
    expect(tooltip).to_contain_text("CPU (plain fit)", timeout=5_000)
    expect(tooltip).to_contain_text("CPU (multi-step loop, XLA)")
    expect(tooltip).to_contain_text("Training seconds")
    expect(page.get_by_text("Smoothing (training curves)")).to_have_count(1)
    race.hover()
    page.get_by_role("button", name="Fullscreen").first.click()
    page.wait_for_timeout(1000)
    assert page.locator('[data-testid="stVegaLiteChart"]').first.bounding_box()["height"] > 0.8 * 720
    page.screenshot(path=ARTIFACTS / "layout-720p-fullscreen.png")
    page.keyboard.press("Escape")
    page.wait_for_timeout(500)

    # What the model learned: ten test images drawn at random, in one row at 1280x720 with the sidebar open.
    strip = page.locator('[data-testid="stTabs"] [data-testid="stImage"]:visible img')
    expect(strip).to_have_count(10)
    strip.first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    assert len({round(strip.nth(i).bounding_box()["y"]) for i in range(10)}) == 1, "the strip wraps at 1280x720"
    page.screenshot(path=ARTIFACTS / "layout-720p-learned.png")
    # Where a step goes, as the trace read it: its bar beside the roofline, the check against the run's own timer.
    page.locator('[data-testid="stVegaLiteChart"]').nth(2).scroll_into_view_if_needed()
    expect(page.get_by_text("TensorFlow's profiler traced", exact=False).first).to_be_visible()
    page.wait_for_timeout(500)
    page.screenshot(path=ARTIFACTS / "layout-720p-why.png")

    page.get_by_text("Show code: reproduce these settings").click()
    for name, size in SIZES.items():
        page.set_viewport_size(size)
        page.wait_for_timeout(1000)
        page.screenshot(path=ARTIFACTS / f"layout-{name}-done.png", full_page=True)
        assert page.evaluate(OVERFLOWING) == [], f"text cut at {size}"
        assert page.evaluate(CHART_TEXTS) > 20  # the charts are drawn as SVG, so the next check sees their text
        cut = page.evaluate(CUT_IN_CHARTS)
        assert cut == [], f"a chart's text cut at {size}: {cut}"
    # The other views, with these runs in the history: nothing cut at either size.
    for name in ("History", "Scaling", "Devices"):
        view(page, name)
        wait_until_idle(page)
        expect(page.get_by_role("button", name="Quick demo")).to_have_count(0)  # the Train settings only on Train
        for size_name, size in SIZES.items():
            page.set_viewport_size(size)
            page.wait_for_timeout(1000)
            page.screenshot(path=ARTIFACTS / f"layout-{size_name}-{name.lower()}.png")
            assert page.evaluate(OVERFLOWING) == [], f"text cut in {name} at {size}"
            cut = page.evaluate(CUT_IN_CHARTS)
            assert cut == [], f"a chart's text cut in {name} at {size}: {cut}"
    quick_demo_shows_both_charts_and_the_metrics(page, RUN_EPOCHS)
    reload_keeps_the_result_and_an_empty_view_points_at_it(page, browser, server)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert errors == [] and watcher_errors == []
    page.close()


def reload_keeps_the_result_and_an_empty_view_points_at_it(page: Page, browser, server: str) -> None:  # noqa: F811
    """The finished demo's runs are in the address: a reload draws them from the history, the same headline; a page
    opened without them says where the last comparison is, and its link overlays it in History."""
    page.set_viewport_size(SIZES["720p"])
    view(page, "Train")
    wait_until_idle(page)
    expect(page).to_have_url(re.compile(r"[?&]runs=([0-9a-f]{8})-1%2C\1-2%2C\1-3(&|$)"), timeout=10_000)
    headline = page.locator(HEADLINE).inner_text()
    page.reload()
    expect(status(page)).to_contain_text("From the history", timeout=60_000)
    expect(status(page)).to_contain_text(f"CPU (multi-step loop, XLA): done, {RUN_EPOCHS} epochs")
    expect(page.locator(CHARTS)).to_have_count(2, timeout=30_000)
    wait_until_idle(page)
    page.wait_for_timeout(1000)
    assert page.locator(HEADLINE).inner_text() == headline
    page.screenshot(path=ARTIFACTS / "layout-720p-reloaded.png")
    assert chart_boxes.covered(page) == [], "a word covers the reloaded result's data"
    fresh, errors = open_page(browser, server)
    fresh.set_viewport_size(SIZES["720p"])
    expect(fresh.get_by_text("Your last comparison is in History")).to_be_visible(timeout=30_000)
    fresh.screenshot(path=ARTIFACTS / "layout-720p-empty.png")
    fresh.get_by_role("link", name="Open it in History").click()
    expect(fresh.locator(HEADLINE)).to_contain_text(headline.split(" (")[0], timeout=30_000)
    expect(fresh.locator(CHARTS)).to_have_count(2, timeout=30_000)
    wait_until_idle(fresh)
    fresh.screenshot(path=ARTIFACTS / "layout-720p-history-linked.png")
    assert fresh.locator('[data-testid="stException"]').count() == 0 and errors == []
    fresh.close()


def test_a_prepared_link_sets_the_page_a_reload_keeps_it_and_a_bad_value_is_refused_in_one_sentence(server, browser):  # noqa: F811
    link = f"{server}/?mode=fit:cpu&model=mlp&epochs=3&batch_size=50&hidden_units=64&optimizer=adam"
    page, errors = open_page(browser, link)
    expect(page.get_by_role("spinbutton", name="Epochs")).to_have_value("3")
    expect(page.get_by_role("spinbutton", name="Batch size")).to_have_value("50")
    expect(page.get_by_role("radio", name=FIT_CPU)).to_be_checked()
    expect(page.get_by_role("heading", name="TensorFlow: plain fit → multi-step loop → XLA, live")).to_be_visible()
    # The address follows the settings (every one of them), so a reload keeps what a person changed since.
    page.get_by_role("spinbutton", name="Epochs").fill("4")
    page.get_by_role("spinbutton", name="Epochs").press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]epochs=4(&|$)"), timeout=10_000)
    assert "model=mlp" in page.url and "mode=fit%3Acpu" in page.url
    page.reload()
    expect(page.get_by_role("spinbutton", name="Epochs")).to_have_value("4", timeout=60_000)
    expect(page.get_by_role("spinbutton", name="Batch size")).to_have_value("50")
    page.close()
    # Bad values: the sentence a widget or a flag gets, and Run stays off until the setting is changed.
    for query, sentence in (
        ("epochs=abc", "epochs must be a whole number from 1 to 1000, not 'abc'."),
        ("epochs=5000", "epochs must be from 1 to 1000, not 5000."),
        ("model=resnet", "model must be one of softmax, mlp, cnn, not 'resnet'."),
    ):
        page, more = open_page(browser, f"{server}/?{query}")
        expect(page.get_by_text(sentence)).to_be_visible(timeout=20_000)
        expect(page.locator(".st-key-run button")).to_be_disabled()
        errors += more
        page.close()
    page, more = open_page(browser, f"{server}/?epochs=abc")
    expect(page.get_by_text("epochs must be a whole number")).to_be_visible(timeout=20_000)
    page.get_by_role("spinbutton", name="Epochs").fill("2")
    page.get_by_role("spinbutton", name="Epochs").press("Enter")
    expect(page.get_by_text("epochs must be a whole number")).to_have_count(0, timeout=10_000)
    expect(page.locator(".st-key-run button:enabled")).to_have_count(1, timeout=120_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert errors == [] and more == []
    page.close()


def test_in_chinese_at_1280x720_every_view_fits_and_speaks_chinese(server, browser):  # noqa: F811
    # Two stored runs of one comparison (the server reads this test session's history file): History overlays them.
    from core.history.store import get_store
    from tests.sample_runs import make_result

    group = f"{uuid.uuid4().int % 10**8:08d}"
    for i in (1, 2):
        get_store().finish(make_result(run_id=f"{group}-{i}", seed=i))
    page = browser.new_page(viewport=SIZES["720p"])
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(f"{server}/?lang=zh")
    expect(page.get_by_role("button", name="快速演示")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("正在检测 GPU…")).to_have_count(0, timeout=120_000)
    wait_until_idle(page)
    expect(page.get_by_role("spinbutton", name="轮次 (epochs)")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "zh-720p-train.png")
    said = {"训练": page.evaluate(OVERFLOWING)}
    # A view change keeps the language in the address; the overlaid runs bring the headline, charts and numbers.
    page.get_by_test_id("stTopNav").get_by_role("link", name="历史").click()
    expect(page).to_have_url(re.compile(r"/history\?(.*&)?lang=zh"), timeout=10_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    # Streamlit's uploader says "Upload" in English only: the page draws its own word over it, in the same place.
    upload = page.locator('[data-testid="stFileUploaderDropzone"] button p').first
    assert upload.evaluate("p => [getComputedStyle(p, '::after').content, getComputedStyle(p).fontSize]") == [
        '"上传"',
        "0px",
    ]
    for i in (1, 2):  # typed, as a person finds a run in a long history: other tests' runs are newer
        pick_first(page, "history_pick", typed=f"{group}-{i}")
        page.keyboard.press("Escape")
        wait_until_idle(page)
    expect(page.locator(HEADLINE)).to_contain_text("快", timeout=30_000)
    expect(page.locator(CHARTS)).to_have_count(2, timeout=30_000)
    page.wait_for_timeout(1000)
    page.screenshot(path=ARTIFACTS / "zh-720p-history.png")
    said["历史"] = page.evaluate(OVERFLOWING) + page.evaluate(CUT_IN_CHARTS) + chart_boxes.covered(page)
    # The two runs named in Train's address, as a reload or a sent link opens them: drawn from the history.
    page.goto(f"{server}/?lang=zh&runs={group}-1,{group}-2")
    expect(status(page)).to_contain_text("来自历史", timeout=60_000)
    expect(page.locator(CHARTS)).to_have_count(2, timeout=30_000)
    wait_until_idle(page)
    page.wait_for_timeout(1000)
    page.screenshot(path=ARTIFACTS / "zh-720p-reloaded.png")
    said["训练（地址中的运行）"] = page.evaluate(OVERFLOWING) + page.evaluate(CUT_IN_CHARTS) + chart_boxes.covered(page)
    for name, path in (("扩展性", "scaling"), ("设备", "devices")):
        page.get_by_test_id("stTopNav").get_by_role("link", name=name).click()
        expect(page).to_have_url(re.compile(f"/{path}\\?(.*&)?lang=zh"), timeout=10_000)
        wait_until_idle(page)
        page.screenshot(path=ARTIFACTS / f"zh-720p-{path}.png")
        said[name] = page.evaluate(OVERFLOWING) + page.evaluate(CUT_IN_CHARTS)
    assert said == {name: [] for name in said}, f"text cut in Chinese at 1280x720: {said}"
    # The switch: English again, in the address too.
    page.locator('[data-testid="stMain"]').get_by_text("English", exact=True).click()
    expect(page).to_have_url(re.compile(r"lang=en"), timeout=10_000)
    expect(page.get_by_test_id("stTopNav").get_by_role("link", name="History")).to_be_visible(timeout=10_000)
    assert page.locator('[data-testid="stException"]').count() == 0 and errors == []
    page.close()
