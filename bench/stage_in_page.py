"""Benchmark: the Quick demo on stage, in a real browser at 1280x720: how soon something moves, and where things sit.

`streamlit run streamlit_app.py` on a free local port, Debian's Chromium through Playwright, the Quick demo
preset, then Run pressed PRESSES times, each the moment the page offers Run again (its button enabled), as a
presenter pressing it again would. For each press it prints the seconds from the click to the first point drawn
in the live charts (an SVG line, dot or bar with a shape) and to both runs done, and how far the charts moved
when the runs ended (nothing should shift). Then, after the last press, at 1280x720 and 1920x1080: the bottom
of the status line, of the charts and of the headline against the window's height (on screen: at most it),
and the charts' height.

With --busy, a process keeps one core busy through the presses (bench/busy.py's hog), so the screenshots show the
page's busy-machine warning.

    .venv/bin/python bench/stage_in_page.py [--presses 2] [--busy]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHARTS = '.st-key-run_charts [data-testid="stVegaLiteChart"]'
# A mark with a shape: Vega draws an empty line or bar group as a path with no (or a trivial) d attribute.
DRAWN = """
() => [...document.querySelectorAll('.st-key-run_charts [data-testid="stVegaLiteChart"] svg')].some(svg =>
  [...svg.querySelectorAll('g.mark-line path, g.mark-symbol path, g.mark-rect path')]
    .some(p => (p.getAttribute('d') || '').length > 12))
"""
SIZES = {"1280x720": {"width": 1280, "height": 720}, "1920x1080": {"width": 1920, "height": 1080}}


def bottom(page, locator) -> float | None:
    """The bottom edge of the first element `locator` finds, in px from the window's top, or None."""
    box = locator.first.bounding_box() if locator.count() else None
    return None if box is None else box["y"] + box["height"]


def headline(page):
    """The speedup sentence (the comparison's headline), however the page wraps it."""
    import re

    return page.get_by_text(re.compile(r"× (faster|slower) than"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=2)
    parser.add_argument("--busy", action="store_true", help="one core kept busy by another process throughout")
    args = parser.parse_args()
    if args.busy:
        import multiprocessing

        from bench.busy import hog

        multiprocessing.Process(target=hog, daemon=True).start()  # ends with this process

    from playwright.sync_api import expect, sync_playwright

    from bench.headline_in_page import start_server
    from core.settings.presets import PRESETS
    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, preset, status, wait_until_idle

    (ROOT / "artifacts").mkdir(exist_ok=True)
    done = f"CPU (multi-step loop, XLA): done, {PRESETS['Quick demo']['epochs']} epochs"
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport=SIZES["1280x720"])
                page.goto(url)
                expect(page.get_by_role("button", name="Quick demo")).to_be_visible(timeout=60_000)
                wait_until_idle(page)
                preset(page, "Quick demo")
                wait_until_idle(page)
                run = page.locator(".st-key-run button:enabled")
                for i in range(args.presses):
                    offered = time.monotonic()
                    run.first.wait_for(timeout=120_000)  # the moment the page offers Run again
                    waited = time.monotonic() - offered
                    run.first.click()
                    began = time.monotonic()
                    expect(status(page)).not_to_contain_text(done, timeout=30_000)  # this press's runs, not the last
                    while page.evaluate(DRAWN) and time.monotonic() - began < 5:  # the last press's charts go first
                        page.wait_for_timeout(50)
                    first = None
                    while first is None:
                        if page.evaluate(DRAWN):
                            first = time.monotonic() - began
                        elif time.monotonic() - began > 120:
                            raise SystemExit(f"press {i + 1}: nothing drawn within 120 s")
                        page.wait_for_timeout(50)
                    # Just before the end, then after it: the charts' place on the page.
                    expect(status(page)).to_contain_text("epoch", timeout=60_000)
                    while "done," not in status(page).inner_text() and time.monotonic() - began < 180:
                        before = page.locator(CHARTS).first.bounding_box()
                        page.wait_for_timeout(100)
                    expect(status(page)).to_contain_text(done, timeout=180_000)
                    ended = time.monotonic() - began
                    wait_until_idle(page)
                    after = page.locator(CHARTS).first.bounding_box()
                    shift = abs(after["y"] - before["y"]) if before and after else float("nan")
                    print(
                        f"press {i + 1}: Run offered {waited:.1f} s after the bench looked | first point drawn"
                        f" {first:.1f} s after Run | both done {ended:.1f} s after Run | charts moved {shift:.0f} px"
                        " when the runs ended",
                        flush=True,
                    )
                for name, size in SIZES.items():
                    page.set_viewport_size(size)
                    page.wait_for_timeout(1500)
                    charts = page.locator(CHARTS)
                    height = charts.first.bounding_box()["height"] if charts.count() else float("nan")
                    where = {
                        "status line": bottom(page, status(page)),
                        "charts": max((bottom(page, charts.nth(k)) or 0) for k in range(charts.count())),
                        "headline": bottom(page, headline(page)),
                    }
                    said = ", ".join(f"{k} ends at {v:.0f} px" if v else f"{k} not found" for k, v in where.items())
                    print(f"{name} after the runs: {said} (window {size['height']} px); charts {height:.0f} px tall")
                    page.screenshot(path=ROOT / "artifacts" / f"stage-{name}.png")
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)


if __name__ == "__main__":
    main()
