"""Benchmark: the Quick demo's headline as the page shows it, pressed REPEATS times in a real browser.

bench/headline_stability.py presses the demo through a Runner alone. On the page the server also
reruns the script (each finished epoch redraws the charts) on the same cores while the runs train,
so this one measures what a presenter sees: `streamlit run streamlit_app.py` on a free local port,
Debian's Chromium through Playwright at 1280x720, the Quick demo preset, Run, and the headline
sentence read off the page once both runs are done; then Run again, in the same session, as a
presenter pressing it again would. It prints each press's sentence and seconds from Run to the
sentence, then the spread: max/min and the largest departure from the median (the goal: ±15 %).

    .venv/bin/python bench/headline_in_page.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SENTENCE = re.compile(r"is (\d+(?:\.\d+)?)× (faster|slower) than .*\((\d+(?:\.\d+)?)-(\d+(?:\.\d+)?) over (\d+)")


def start_server(home: Path) -> tuple[subprocess.Popen, str]:
    """The dashboard on a free port of 127.0.0.1, its history in `home` (not the user's)."""
    from bench.idle_pages import serve_args
    from core.history.paths import DB_ENV
    from tests.test_browser import free_port

    port = free_port()
    env = {**os.environ, DB_ENV: str(home / "runs.sqlite3")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", *serve_args("streamlit_app.py", port)],
        cwd=ROOT,
        env=env,
        stdout=open(home / "streamlit.log", "w"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the dashboard did not start; see {home / 'streamlit.log'}")
        time.sleep(0.3)


def cpu_seconds(server_pid: int) -> dict[str, float]:
    """CPU seconds used so far (user + system) by the server process itself, its training workers (ended or not), and
    Chromium."""
    tick = os.sysconf("SC_CLK_TCK")
    used = {"server": 0.0, "workers": 0.0, "chromium": 0.0}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        seconds = (int(fields[11]) + int(fields[12])) / tick
        if int(entry.name) == server_pid:
            used["server"] += seconds
            used["workers"] += (int(fields[13]) + int(fields[14])) / tick  # its workers that have ended
        elif "core.runner.serve" in cmdline:
            used["workers"] += seconds
        elif "chromium" in cmdline:
            used["chromium"] += seconds
    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from playwright.sync_api import expect, sync_playwright

    from bench.headline_stability import spread  # the same measure of spread as the headless bench
    from core.settings.presets import PRESETS
    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, click, preset, status, wait_until_idle

    epochs = PRESETS["Quick demo"]["epochs"]
    done = f"CPU (multi-step loop, XLA): done, {epochs} epochs"
    ratios: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(url)
                expect(page.get_by_role("button", name="Quick demo")).to_be_visible(timeout=60_000)
                wait_until_idle(page)
                preset(page, "Quick demo")
                wait_until_idle(page)
                for i in range(args.repeats):
                    before = cpu_seconds(proc.pid)
                    click(page, "run")
                    began = time.monotonic()
                    expect(status(page)).not_to_contain_text(done, timeout=30_000)  # this press's runs, not the last
                    expect(status(page)).to_contain_text(done, timeout=180_000)
                    headline = page.get_by_text(re.compile(r"CPU \(multi-step loop, XLA\) is .*× (faster|slower)"))
                    expect(headline.first).to_be_visible(timeout=30_000)
                    text = headline.first.inner_text()
                    took = time.monotonic() - began
                    after = cpu_seconds(proc.pid)
                    found = SENTENCE.search(text)
                    if not found:
                        raise SystemExit(f"press {i + 1}: no headline in {text!r}")
                    ratio = float(found[1]) if found[2] == "faster" else 1 / float(found[1])
                    ratios.append(ratio)
                    cpu = ", ".join(f"{k} {after[k] - before[k]:.1f}" for k in after)
                    print(f"press {i + 1}: {' '.join(text.split())} | {took:.0f} s from Run | CPU s: {cpu}", flush=True)
                    wait_until_idle(page)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)
        # Each side's steady samples/s, from the page's own history (newest first: pairs of a press).
        from core.analysis import compare
        from core.history.store import Store

        store = Store(Path(tmp) / "runs.sqlite3")
        runs = store.load(reversed([r.run_id for r in store.history()]))  # oldest first
        for n, press in enumerate(zip(runs[0::2], runs[1::2], strict=True), 1):
            base, other = sorted(press, key=lambda r: r.config["execution"] != "keras-fit")
            print(
                f"press {n}: {compare.throughput(base):,.0f} samples/s plain fit,"
                f" {compare.throughput(other):,.0f} multi-step loop"
            )
        store.close()
    print(f"headline on the page over {len(ratios)} presses: {spread(ratios)}")


if __name__ == "__main__":
    main()
