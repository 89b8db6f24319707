"""What a room of viewers costs the run it measures: N simulated viewer sessions against one run from the presenter's
page.

    .venv/bin/python bench/room.py --viewers 30 [--seconds 8] [--rounds 3] [--app-dir DIR]

The server is started as `make share` serves it (app.py, or streamlit_app.py in a checkout from before it, with a
presenter token in its environment) on a free local port, with a throw-away history. A presenter session (a raw
websocket client speaking Streamlit's protocol: tests/st_client.py) presses "The tutorial", sets 1,000 epochs and
presses Run. Then N viewer sessions open the page (the room's arrival, a one-off, is timed and left out), and the run
alternates, --rounds times, between phase A, in which the room asks for nothing (its pages open, as hidden tabs),
and phase B, in which each viewer reruns its live fragment at the interval the server asks for, as a browser's page
does; A comes first and last (A B A B A B A with 3 rounds), so a drift of the machine's speed during the run weighs
on both alike. The presenter's page ticks as a browser's does throughout, and is drawn whole every 5 s. Then,
watched by a room of the same size again, the presenter presses Stop.

Prints, from the run's own per-call points (seconds per optimizer step; the epoch a phase began in, and epoch 1,
left out), the median step in A (every A phase) and in B, each B phase against the A phases beside it, and:
  room_step_slowdown: B's median step over A's (1.00: the room costs the run nothing)
  presenter_render_s: the seconds of the slowest of the presenter's whole-page draws during B
  stop_seen_s: seconds from Stop until every viewer's page says the run was stopped by the presenter
and the server process's CPU (cores) in each phase, and this bench's own (its simulated clients, whose threads run at
nice +19: a real viewer's browser runs on another machine). No asserts; a step that fails is one sentence, exit 1.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.idle_pages import (  # noqa: E402
    CLK_TCK,
    Failed,
    free_port,
    process_ticks,
    say,
    serve_args,
    stop_server,
    streamlit_command,
    thread_ticks,
    wait_healthy,
)
from core.history.store import Store  # noqa: E402
from tests import st_client  # noqa: E402
from ui.priority import GONE_S  # noqa: E402

TOKEN = "room-bench-presenter-token-0123456789abcdef"
STOPPED = "stopped by the presenter"
CLIENT_NICE = 19  # the simulated viewers' threads in this process (their real browsers are elsewhere)
RENDER_EVERY_S = 5.0  # the presenter's page drawn whole (and timed) this often; between, its live fragment ticks


class Viewer(threading.Thread):
    """One viewer's page: open it, then rerun its live fragment at the server's interval until told to leave."""

    def __init__(self, url: str, leave: threading.Event, stop_at: list[float], talk: threading.Event | None = None):
        super().__init__(daemon=True)
        self.url, self.leave, self.stop_at = url, leave, stop_at
        self.talk = talk  # cleared: the page asks for nothing (phase A), as a hidden tab; None: it always ticks
        self.opened = threading.Event()  # its page drawn whole once: it has arrived
        self.seen_stop: float | None = None
        self.runs, self.error = 0, None
        self.messages, self.whole = 0, 0  # ForwardMsgs read in its reruns; reruns that drew the whole page

    def run(self) -> None:
        # A viewer's browser runs on another machine and costs this one nothing: its stand-in here yields to all.
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), CLIENT_NICE)
        except (AttributeError, OSError):
            pass
        try:
            page = st_client.Session(self.url).connect()
            page.watch = STOPPED  # seen when a delta says it, as a browser draws it, not when the run ends
            page.run(timeout=120)
            self.opened.set()
            took = 0.0  # the last rerun's seconds: the browser's next auto-rerun was sent while it ran
            while not self.leave.is_set():
                fragment, every = next(iter(page.fragments.items()), (None, 0.7))
                if self.talk is not None and not self.talk.is_set():
                    self.talk.wait()  # set again for phase B, or to leave
                    time.sleep(random.uniform(0, every))  # a room's ticks are spread, not one burst
                    continue
                time.sleep(max(0.0, every - took))  # a browser's timer fires every interval, run or not
                done = page.run(fragment=fragment, timeout=120)
                took = done.seconds
                self.runs += 1
                self.messages += done.messages
                self.whole += not done.fragment
                if self.stop_at and self.seen_stop is None and page.watch_seen is not None:
                    self.seen_stop = page.watch_seen - self.stop_at[0]
                    return
            page.close()
        except Exception as err:  # noqa: BLE001 - one viewer's failure is reported, the bench goes on
            self.error = f"{type(err).__name__}: {err}"


def steps_in(store: Store, run_id: str, epochs: tuple[int, int]) -> list[float]:
    """Seconds per optimizer step of every call in epochs first..last (epoch 1, the warm-up, left out)."""
    run = store.get(run_id)
    first, last = max(epochs[0], 2), epochs[1]
    return [c.step_seconds for e in run.epochs if first <= e.epoch <= last for c in e.calls]


def epochs_done(store: Store) -> int:
    rows = store.history()
    return rows[0].epochs_done if rows else 0


def phase(seconds: float, store: Store, presenter: st_client.Session, pid: int) -> dict:
    """One phase: the epochs it covered, the server's CPU in cores, and the presenter's page as a browser's: its live
    fragment at the server's interval, and a whole draw (a reload, say) every RENDER_EVERY_S, timed."""
    # The epoch in progress when it begins is partly the previous phase's: the phase's own epochs are those after it.
    began, first, ticks, own = time.monotonic(), epochs_done(store) + 2, process_ticks(pid), process_ticks(os.getpid())
    loop = thread_ticks(pid).get(pid, ("", 0))[1]  # the main thread: Tornado's event loop, at the run's priority
    renders, last_render, took = [], began, 0.0
    while time.monotonic() - began < seconds:
        if time.monotonic() - last_render >= RENDER_EVERY_S:
            renders.append(presenter.run(timeout=120).seconds)
            last_render = time.monotonic()
        fragment, every = next(iter(presenter.fragments.items()), (None, 0.7))
        time.sleep(max(0.0, every - took))
        took = presenter.run(fragment=fragment, timeout=120).seconds
    elapsed = time.monotonic() - began
    return {
        "epochs": (first, epochs_done(store)),
        "renders": renders,
        "server_cores": (process_ticks(pid) - ticks) / CLK_TCK / elapsed,
        "loop_cores": (thread_ticks(pid).get(pid, ("", 0))[1] - loop) / CLK_TCK / elapsed,
        "client_cores": (process_ticks(os.getpid()) - own) / CLK_TCK / elapsed,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--viewers", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=8.0, help="length of each phase, in seconds")
    ap.add_argument("--rounds", type=int, default=3, help="B phases, each between two A phases")
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    args = ap.parse_args()
    if not 1 <= args.seconds < GONE_S:  # a page asking for nothing longer than GONE_S leaves the room (ui.priority)
        ap.error(f"--seconds must be at least 1 and under {GONE_S:.0f}, not {args.seconds:g}")
    if args.rounds < 1:
        ap.error(f"--rounds must be 1 or more, not {args.rounds}")
    app_dir = args.app_dir.resolve()
    entry = "app.py" if (app_dir / "app.py").is_file() else "streamlit_app.py"
    tmp = Path(tempfile.mkdtemp(prefix="room-"))
    db = tmp / "runs.sqlite3"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, TFDASH_DB=str(db), TFDASH_PRESENTER_TOKEN=TOKEN)
    cmd = [*streamlit_command(app_dir), *serve_args(entry, port)]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # terminated: the finally below ends the server too
    log = open(tmp / "streamlit.log", "w")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(cmd, cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    viewers: list[Viewer] = []
    status = 1
    try:
        wait_healthy(url, proc, 90)
        say(f"server: {entry} in {app_dir} on port {port}, {args.viewers} viewers, phases of {args.seconds:.0f} s")
        presenter = st_client.Session(url).connect()
        first = presenter.run(query=f"token={TOKEN}", timeout=120)
        if first.buttons.get("run") is not False and "Presenter" not in presenter.page_text():
            raise Failed("the presenter's page is not the presenter's")
        preset = presenter.run(widgets=st_client.click(first, "preset_The tutorial"), timeout=120)
        offered = time.monotonic() + 180
        while preset.buttons.get("run") is not False:  # Run is offered once the next job's workers wait, warm
            if time.monotonic() > offered:
                raise Failed("Run was not offered within 180 s of the page opening")
            time.sleep(1.0)
            preset = presenter.run(timeout=120)
        states = st_client.set_number(presenter, "epochs", 1000, st_client.click(preset, "run"))
        presenter.run(widgets=states, timeout=120)
        store = Store(db)
        deadline = time.monotonic() + 240
        while epochs_done(store) < 3:
            if time.monotonic() > deadline:
                raise Failed("the run did not reach epoch 3 within 240 s")
            time.sleep(0.5)
        run_id = store.history()[0].run_id
        leave, stop_at, talk = threading.Event(), [], threading.Event()
        viewers = [Viewer(url, leave, stop_at, talk) for _ in range(args.viewers)]
        arriving = time.monotonic()
        for v in viewers:
            v.start()
            time.sleep(0.05)  # a room arriving, not one burst
        for v in viewers:  # the room's arrival (a whole page each) is a one-off: the phases measure the room once in
            v.opened.wait(120)
        say(
            f"run {run_id}: training; the room arrived (every page drawn whole once)"
            f" in {time.monotonic() - arriving:.1f} s"
        )
        phases: list[tuple[str, dict]] = []
        for name in "A" + "BA" * args.rounds:
            talk.set() if name == "B" else talk.clear()
            phases.append((name, phase(args.seconds, store, presenter, proc.pid)))
            say(
                f"phase {name} ({'the room ticking' if name == 'B' else 'the room asking for nothing'}): "
                f"epochs {phases[-1][1]['epochs'][0]}-{phases[-1][1]['epochs'][1]}"
            )
        leave.set()
        talk.set()
        for v in viewers:
            v.join(60)
        if store.history()[0].status != "running":
            raise Failed("the run ended before the last phase did: give fewer --seconds or --rounds")
        # Stop, watched by a fresh room of the same size: how soon does every page say so?
        leave.clear()
        watchers = [Viewer(url, leave, stop_at) for _ in range(args.viewers)]
        for v in watchers:
            v.start()
            time.sleep(0.05)
        time.sleep(5)
        run = presenter.run(timeout=120)
        stop_at.append(time.monotonic())
        stopping = presenter.run(widgets=st_client.click(run, "stop"), timeout=120)
        say(f"the presenter's Stop click ran in {stopping.seconds:.2f} s")
        while store.history()[0].status == "running" and time.monotonic() - stop_at[0] < 60:
            time.sleep(0.02)
        say(f"the run's row left 'running' {time.monotonic() - stop_at[0]:.2f} s after Stop was pressed")
        for v in watchers:
            v.join(60)
        leave.set()
        steps = [steps_in(store, run_id, ph["epochs"]) for _, ph in phases]
        reference = [x for (name, _), xs in zip(phases, steps, strict=True) if name == "A" for x in xs]
        loaded = [x for (name, _), xs in zip(phases, steps, strict=True) if name == "B" for x in xs]
        if not reference or not loaded:
            raise Failed(
                f"no calls measured (epochs per phase: {[ph['epochs'] for _, ph in phases]}): give more --seconds"
            )
        ref, room = statistics.median(reference), statistics.median(loaded)
        seen = [v.seen_stop for v in watchers]
        errors = [v.error for v in [*viewers, *watchers] if v.error]
        say(f"median step: A {ref * 1e3:.3f} ms ({len(reference)} calls), B {room * 1e3:.3f} ms ({len(loaded)} calls)")
        beside = [  # each B phase's median over that of the A phases before and after it
            statistics.median(steps[i]) / statistics.median(steps[i - 1] + steps[i + 1])
            for i in range(1, len(phases), 2)
            if steps[i] and steps[i - 1] + steps[i + 1]
        ]
        say("each B phase against the A phases beside it: " + ", ".join(f"{r:.2f}" for r in beside))

        def cores(key: str, name: str) -> str:
            return f"{statistics.mean(ph[key] for n, ph in phases if n == name):.2f}"

        say(
            f"server CPU (cores, the mean of the phases): A {cores('server_cores', 'A')},"
            f" B {cores('server_cores', 'B')}"
        )
        say(f"of which the event loop (main thread): A {cores('loop_cores', 'A')}, B {cores('loop_cores', 'B')}")
        say(
            f"this bench's simulated clients' CPU (cores, at nice {CLIENT_NICE}): A {cores('client_cores', 'A')}, "
            f"B {cores('client_cores', 'B')}"
        )
        runs, whole = sum(v.runs for v in viewers), sum(v.whole for v in viewers)
        say(
            f"viewer fragment reruns in B: {runs} ({whole} of them drew the whole page);"
            f" errors: {len(errors)} {errors[:2]}"
        )
        say(f"messages the server sent per viewer rerun in B: {sum(v.messages for v in viewers) / max(runs, 1):.1f}")
        say(f"room_step_slowdown: {room / ref:.2f}")
        renders = [r for name, ph in phases if name == "B" for r in ph["renders"]]
        if renders:
            say(f"presenter_render_s: {max(renders):.2f} (the slowest of its {len(renders)} whole draws in B)")
        else:  # phases shorter than the presenter's 5 s redraw
            say("presenter_render_s: none (the presenter's page was not drawn whole in B: give --seconds 6 or more)")
        if args.viewers:
            missing = sum(s is None for s in seen)
            worst = max((s for s in seen if s is not None), default=float("nan"))
            said = sorted(s for s in seen if s is not None)
            if said:
                say(f"Stop seen by the pages: first {said[0]:.2f} s, median {statistics.median(said):.2f} s")
            say(
                f"stop_seen_s: {worst:.2f}"
                + (f" ({missing} of {len(seen)} pages never said so within 60 s)" if missing else "")
            )
        status = 0
    except (Failed, TimeoutError, st_client.Refused) as err:
        say(f"FAILED: {err}. Server log: {tmp / 'streamlit.log'}")
    finally:
        stop_server(proc)
        log.close()
        if status == 0:
            shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
