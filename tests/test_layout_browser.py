"""The page on a projector, in a real Chromium: what must be on screen at 1280x720, and nothing cut at 1024x768 either.

Screenshots go to artifacts/ (layout-*.png): look at them.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import (  # noqa: F401
    ARTIFACTS,
    DEMO_EPOCHS,
    FIT_CPU,
    browser,
    click,
    open_page,
    preset,
    screenshots_on_failure,
    server,
    status,
    view,
    wait_until_idle,
)

pytestmark = pytest.mark.browser

SIZES = {"720p": {"width": 1280, "height": 720}, "xga": {"width": 1024, "height": 768}}
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
        if box is None or box["y"] < 0 or box["x"] < 0 or box["y"] + box["height"] > size["height"] + 1 \
                or box["x"] + box["width"] > size["width"] + 1:  # fmt: skip
            out.append(f"{selector}[{i}]: {box}")
    return out


def test_during_a_run_the_status_and_both_charts_fit_a_projector_and_nothing_is_cut(server, browser, fashion_mnist):  # noqa: F811
    page, errors = open_page(browser, server)
    page.set_viewport_size(SIZES["720p"])
    wait_until_idle(page)
    preset(page, "Quick demo")
    wait_until_idle(page)
    expect(page.get_by_role("radio", name=FIT_CPU)).to_be_checked()
    click(page, "run")

    # During the run, at 1280x720 with the sidebar open: the status line and both charts, no scrolling.
    expect(page.locator(CHARTS)).to_have_count(2, timeout=120_000)
    expect(status(page)).to_contain_text("epoch", timeout=30_000)
    page.wait_for_timeout(1500)  # the charts' canvases drawn
    page.screenshot(path=ARTIFACTS / "layout-720p-running.png")
    assert page.evaluate("() => window.scrollY") == 0
    assert inside(page, CHARTS) == [], "a chart is below the fold at 1280x720"
    assert inside(page, '[data-testid="stMarkdownContainer"] strong >> nth=0') == []
    # Streamlit's own header Stop (it stops only the script, freezing the page) is not there to press.
    assert page.locator('[data-testid="stStatusWidget"] button:visible').count() == 0

    expect(status(page)).to_contain_text(f"CPU (multi-step loop, XLA): done, {DEMO_EPOCHS} epochs", timeout=120_000)
    wait_until_idle(page)
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
        for size_name, size in SIZES.items():
            page.set_viewport_size(size)
            page.wait_for_timeout(1000)
            page.screenshot(path=ARTIFACTS / f"layout-{size_name}-{name.lower()}.png")
            assert page.evaluate(OVERFLOWING) == [], f"text cut in {name} at {size}"
            cut = page.evaluate(CUT_IN_CHARTS)
            assert cut == [], f"a chart's text cut in {name} at {size}: {cut}"
    assert page.locator('[data-testid="stException"]').count() == 0
    assert errors == []
    page.close()
