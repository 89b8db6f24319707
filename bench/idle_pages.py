"""What idle open browser pages cost the Streamlit server while a training run is going.

Usage: .venv/bin/python bench/idle_pages.py [--app-dir DIR] [--seconds 30] [--pages 3]

DIR is a checkout of the project (default: the repository this script is in). The script starts
`DIR/.venv/bin/streamlit run streamlit_app.py` (or this interpreter's Streamlit when DIR has no
.venv) on a free localhost port, with TFDASH_DB pointing at a throw-away sqlite file, opens one
page in headless Chromium (Playwright, /usr/bin/chromium), starts a long training from it (the
preset "The tutorial", Epochs raised, Run), waits until the run is in steady state, and then
measures the server process's CPU time twice over the same duration:

  A. with only that page open;
  B. with --pages more pages open, each of which only loaded the URL and sits idle.

What is measured: utime+stime of the server process (/proc/PID/stat: all its threads, those that
exited during the window included; child processes excluded) and, sampled every half second, of
each thread (/proc/PID/task/*/stat), summed by thread name. Python 3.11 does not give its threads
OS-level names, so the server is started with a small sitecustomize (on PYTHONPATH, a temp dir;
nothing in DIR changes) that copies each Python thread's name into the kernel's comm (15
characters: "ScriptRunner.sc" is Streamlit's script thread, "training-runner" the project's
training worker; threads TensorFlow starts from the worker inherit that name unless TensorFlow
names them itself). --no-thread-names turns this off.

The headline figure, `idle_page_cpu_seconds_per_30s`, is (B - A) / pages for the NON-training
threads only, scaled to 30 s. Why not the whole process: on a small machine the training threads
take whatever CPU is left, so extra pages mostly show up as *less* training CPU (and fewer epochs
per second), which would hide their cost in the whole-process figure. The non-training threads
(the event loop that sends deltas to the browsers, the script threads, Streamlit's helpers) are
what an idle page adds work to. The whole-process figures, the training throughput (epochs per
second, read from the page's "N of M epochs" line when it has one) and Chromium's own CPU are
printed as well, so the trade can be judged. Caveats: an idle page in a layout that watches the
run redraws at every epoch, and the charts grow with the epochs, so B is measured later in the
run than A; run it twice to see the noise. When the CPUs are saturated (2 cores with Chromium on
them, and Python's GIL shared by the script threads and the training worker) extra pages mostly slow
training down and the watching threads coalesce their redraws, so the difference can come out near
zero or negative: the script then says so, and the epochs/s change is the figure to read beside it.

Prints a few lines, no asserts; exits non-zero with one sentence when a step fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

# As tests/test_browser.py launches it: this script imports nothing of the checkout it measures (--app-dir).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 720}
RUNNING = '[data-testid="stStatusWidget"]'  # Streamlit's "running" indicator, present only while the script runs
EPOCHS_RE = re.compile(r"(\d+)\s+of\s+(\d+)\s+epochs")
IN_PROGRESS_RE = re.compile(r"\bepoch\s+(\d+)\s+of\s+(\d+)")  # core.language.progress: "epoch 3 of 10" is in progress
# Thread names (comm, 15 characters) taken to be training: the project's worker and what TensorFlow starts.
TRAINING_RE = re.compile(r"^(training-runn|tf_|tf-|Eigen|inter_op|intra_op|grpc)", re.IGNORECASE)
CLK_TCK = os.sysconf("SC_CLK_TCK")

# Copies each Python thread's name into the kernel's per-thread comm, so /proc shows it.
SITECUSTOMIZE = """
import ctypes, sys, threading
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
    _orig = threading.Thread._bootstrap_inner
    def _bootstrap_inner(self):
        try:
            _prctl(15, self.name.encode("utf-8", "replace")[:15], 0, 0, 0)  # PR_SET_NAME
        except Exception:
            pass
        _orig(self)
    threading.Thread._bootstrap_inner = _bootstrap_inner
except Exception:
    pass
# Chain to a sitecustomize further down sys.path, if there is one.
_here = __file__.rsplit("/", 1)[0]
_saved = list(sys.path)
try:
    sys.path[:] = [p for p in sys.path if p.rstrip("/") != _here.rstrip("/")]
    sys.modules.pop("sitecustomize", None)
    import sitecustomize  # noqa: F401
except ImportError:
    pass
finally:
    sys.path[:] = _saved
"""


class Failed(Exception):
    """A step that did not work: its message is printed as one sentence."""


def say(msg: str) -> None:
    print(msg, flush=True)


# -- /proc ----------------------------------------------------------------------------------
def _stat_ticks(path: str) -> tuple[int, int] | None:
    """(utime+stime, ppid) from a /proc stat file, or None when it is gone."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2 :].split()
    return int(rest[11]) + int(rest[12]), int(rest[1])


def process_ticks(pid: int) -> int:
    got = _stat_ticks(f"/proc/{pid}/stat")
    return got[0] if got else 0


def thread_ticks(pid: int) -> dict[int, tuple[str, int]]:
    """{tid: (name, utime+stime ticks)} for the threads alive now."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        got = _stat_ticks(f"/proc/{pid}/task/{tid}/stat")
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if got:
            out[int(tid)] = (name, got[0])
    return out


def descendants_ticks(root: int, exclude: int) -> int:
    """utime+stime of all living processes below `root`, without `exclude`'s subtree (Chromium, the driver)."""
    info = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat_ticks(f"/proc/{entry}/stat")
            if got:
                info[int(entry)] = got
    children = defaultdict(list)
    for pid, (_, ppid) in info.items():
        children[ppid].append(pid)
    total, stack = 0, [c for c in children[root] if c != exclude]
    while stack:
        pid = stack.pop()
        total += info[pid][0]
        stack.extend(c for c in children[pid] if c != exclude)
    return total


def machine_ticks() -> tuple[int, int]:
    """(busy, all) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def measure(pid: int, seconds: float, epochs_now, browser_root: int) -> dict:
    """CPU seconds of the server over `seconds`: whole process, per thread name, training or not."""
    e0, b0, p0, t_start = epochs_now(), descendants_ticks(browser_root, pid), process_ticks(pid), time.monotonic()
    m0 = machine_ticks()
    last = thread_ticks(pid)
    per_tid: dict[int, list] = {tid: [name, 0] for tid, (name, _) in last.items()}
    deadline = t_start + seconds
    while (now := time.monotonic()) < deadline:
        time.sleep(min(0.5, deadline - now))
        cur = thread_ticks(pid)
        for tid, (name, ticks) in cur.items():
            before = last.get(tid, (name, 0))[1]
            entry = per_tid.setdefault(tid, [name, 0])
            entry[0] = name  # a thread may be renamed after it started
            entry[1] += max(0, ticks - before)
        last = {**last, **cur}
    elapsed = time.monotonic() - t_start
    p1, b1, m1 = process_ticks(pid), descendants_ticks(browser_root, pid), machine_ticks()
    e1 = epochs_now()
    by_name: dict[str, list] = defaultdict(lambda: [0.0, 0])
    for name, ticks in per_tid.values():
        by_name[name][0] += ticks / CLK_TCK
        by_name[name][1] += 1
    total = (p1 - p0) / CLK_TCK
    seen = sum(v[0] for v in by_name.values())
    if total - seen > 0.05:
        by_name["(exited threads)"] = [total - seen, 0]
    training = sum(v[0] for n, v in by_name.items() if TRAINING_RE.match(n))
    epochs = (e1 - e0) if e0 is not None and e1 is not None else None
    return {
        "seconds": elapsed,
        "total": total,
        "training": training,
        "other": total - training,
        "by_name": dict(by_name),
        "epochs": epochs,
        "browser": (b1 - b0) / CLK_TCK,
        "machine_busy": (m1[0] - m0[0]) / max(1, m1[1] - m0[1]),
    }


# -- the server -----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_command(app_dir: Path) -> list[str]:
    own = app_dir / ".venv" / "bin" / "streamlit"
    if own.exists():
        return [str(own)]
    exe = Path(sys.executable).parent / "streamlit"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "streamlit"]


def serve_args(entry: str, port: int) -> list[str]:
    """`streamlit run ENTRY` on 127.0.0.1:PORT, headless, watching no files, sending no usage statistics."""
    return [
        "run",
        entry,
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
    ]


def stop_server(proc: subprocess.Popen) -> None:
    """End a server started in its own process group: SIGTERM, then SIGKILL if it outlasts 15 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Failed(f"streamlit exited with status {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise Failed(f"streamlit did not answer {url}/_stcore/health within {timeout:.0f} s")


# -- the page -------------------------------------------------------------------------------
def wait_idle(page, timeout: float = 30) -> None:
    """Until the script has not been running for a whole second (bounded; a watching page may never be idle)."""
    deadline, quiet = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        if page.locator(RUNNING).count() == 0:
            quiet = quiet or time.monotonic()
            if time.monotonic() - quiet >= 1.0:
                return
        else:
            quiet = None
        page.wait_for_timeout(100)


def first_visible(candidates, timeout_ms: int = 0):
    """The first locator among `candidates` that has a visible element, or None."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        for loc in candidates:
            try:
                for i in range(loc.count()):
                    if loc.nth(i).is_visible():
                        return loc.nth(i)
            except Exception:  # noqa: BLE001 - a selector the page does not support
                continue
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def page_ready(page, timeout_ms: int = 60_000) -> bool:
    """Whether the page drew its controls (a Run button, a preset or the Epochs input) in time."""
    found = first_visible(
        [
            page.get_by_role("button", name="Run", exact=True),
            page.get_by_role("button", name="The tutorial", exact=True),
            page.get_by_role("spinbutton", name="Epochs"),
        ],
        timeout_ms,
    )
    return found is not None


def page_epochs(page) -> int | None:
    """Epochs done, from the first 'N of M epochs' on the page, or None when there is none."""
    try:
        text = page.locator("body").inner_text(timeout=5000)
    except Exception:  # noqa: BLE001
        return None
    if m := EPOCHS_RE.search(text):
        return int(m.group(1))
    m = IN_PROGRESS_RE.search(text)  # newer pages word the epoch in progress: 'epoch 4 of 10' = 3 done
    return int(m.group(1)) - 1 if m else None


def start_from_page(page, epochs: int) -> list[str]:
    """Preset, Epochs, Run, by visible labels; returns what was done (raises Failed if Run was not found)."""
    done = []
    preset = first_visible(
        [
            page.get_by_role("button", name="The tutorial", exact=True),
            page.get_by_role("button", name=re.compile("tutorial", re.I)),
        ]
    )
    if preset is not None:
        preset.click()
        wait_idle(page)
        done.append("preset 'The tutorial'")
    else:
        say("note: no 'The tutorial' preset button; starting with the page's default settings.")
    box = first_visible(
        [
            page.get_by_role("spinbutton", name="Epochs", exact=True),
            page.get_by_label("Epochs", exact=True),
            page.locator('input[aria-label="Epochs"]'),
            page.get_by_role("spinbutton", name=re.compile(r"^Epochs", re.I)),
        ]
    )
    if box is not None:
        box.fill(str(epochs))
        box.press("Enter")
        wait_idle(page)
        done.append(f"Epochs={box.input_value()}")
    else:
        say("note: no 'Epochs' input found; the run keeps the preset's epochs and may end too soon.")
    run = first_visible(
        [
            page.get_by_role("button", name="Run", exact=True),
            page.get_by_role("button", name=re.compile(r"^\s*(▶\s*)?Run\b", re.I)),
            page.get_by_role("button", name=re.compile(r"\b(train|start)\b", re.I)),
        ]
    )
    if run is None or not run.is_enabled():
        raise Failed("could not start a run from the page: no enabled 'Run' button (try --start-cli)")
    run.click()
    done.append("Run")
    return done


def stop_from_page(page) -> bool:
    try:
        stop = first_visible([page.get_by_role("button", name="Stop", exact=True)])
        if stop is not None and stop.is_enabled():
            stop.click()
            return True
    except Exception:  # noqa: BLE001
        pass
    return False


def training_threads_busy(pid: int, window: float = 2.0) -> float:
    """CPU cores the training threads (or, without thread names, the whole process) used over `window`."""

    def ticks():
        named = [t for n, t in thread_ticks(pid).values() if TRAINING_RE.match(n)]
        return sum(named) if named else process_ticks(pid)

    t0 = ticks()
    time.sleep(window)
    return (ticks() - t0) / CLK_TCK / window


def wait_steady(page, pid: int, timeout: float, settle: float) -> str:
    """Until the first epoch is shown (or, on a page without the line, training threads keep a core busy), plus
    `settle`."""
    deadline = time.monotonic() + timeout
    busy_for = 0
    while time.monotonic() < deadline:
        n = page_epochs(page)
        if n is not None and n >= 1:
            time.sleep(settle)
            return f"epoch {page_epochs(page)} shown"
        busy = training_threads_busy(pid)
        busy_for = busy_for + 1 if busy > 0.7 else 0
        if n is None and busy_for >= 5:  # about 10 s of a busy core and no epoch line on the page
            time.sleep(settle)
            return "training threads busy (no 'N of M epochs' line on the page)"
    raise Failed(f"no training seen within {timeout:.0f} s of starting it")


# -- report ---------------------------------------------------------------------------------
def report(a: dict, b: dict, pages: int, seconds: float) -> None:
    def line(tag, m):
        rate = ""
        if m["epochs"]:
            rate = f", {m['epochs'] / m['seconds']:.2f} epochs/s, other {m['other'] / m['epochs']:.3f} s/epoch"
        return (
            f"{tag}: whole process {m['total']:.2f} s CPU in {m['seconds']:.1f} s "
            f"(training threads {m['training']:.2f}, other {m['other']:.2f}){rate}; Chromium {m['browser']:.2f} s"
        )

    say(line(f"{'A, 1 page':<13}", a))
    say(line(f"{f'B, 1+{pages} pages':<13}", b))
    say("per thread name, CPU s in A -> B (threads):")
    names = sorted(set(a["by_name"]) | set(b["by_name"]), key=lambda n: -(b["by_name"].get(n, [0])[0]))
    for n in names:
        va, vb = a["by_name"].get(n, [0.0, 0]), b["by_name"].get(n, [0.0, 0])
        if va[0] < 0.01 and vb[0] < 0.01:
            continue
        role = "training" if TRAINING_RE.match(n) else "other"
        say(f"  {n:<17} {va[0]:7.2f} ({va[1]:>2}) -> {vb[0]:7.2f} ({vb[1]:>2})  [{role}]")
    scale = 30.0 / seconds
    per_page_total = (b["total"] - a["total"]) / pages * scale
    per_page_other = (b["other"] - a["other"]) / pages * scale
    say(
        f"per extra page, per 30 s: whole process {per_page_total:+.2f} s, "
        f"non-training threads {per_page_other:+.2f} s, Chromium {(b['browser'] - a['browser']) / pages * scale:+.2f} s"
    )
    if a["epochs"] and b["epochs"] is not None:
        drop = 1 - (b["epochs"] / b["seconds"]) / (a["epochs"] / a["seconds"])
        say(
            f"training with {pages} more pages: epochs/s {-drop:+.0%}, training threads "
            f"{(b['training'] - a['training']) / pages * scale:+.2f} s CPU per extra page per 30 s"
        )
    cores = os.cpu_count() or 1
    busy = max(a["machine_busy"], b["machine_busy"])
    say(f"machine: {cores} cores, busy {a['machine_busy']:.0%} in A and {b['machine_busy']:.0%} in B (all processes)")
    if busy > 0.9:
        say(
            "note: the CPUs were saturated: pages then take CPU from training (fewer epochs, so fewer redraws), "
            "so the per-page figure below understates the work (it can even come out negative); read it with the "
            "epochs/s change and the 1-page figure, and compare runs for the noise."
        )
    say(f"idle_page_cpu_seconds_per_30s: {per_page_other:.2f}")


# -- main -----------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each measurement")
    ap.add_argument("--pages", type=int, default=3, help="idle pages opened for the second measurement")
    ap.add_argument("--epochs", type=int, default=1000, help="epochs for the run started from the page")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds after the first epoch, and after opening pages")
    ap.add_argument("--start-timeout", type=float, default=180.0, help="bound on reaching the first epoch")
    ap.add_argument(
        "--start-cli",
        action="store_true",
        help="do not press anything: wait (--start-timeout) for a run started by hand in the printed URL",
    )
    ap.add_argument("--no-thread-names", action="store_true", help="leave the server's thread names alone")
    args = ap.parse_args()

    app_dir = args.app_dir.resolve()
    if not (app_dir / "streamlit_app.py").is_file():
        say(f"FAILED: {app_dir} has no streamlit_app.py.")
        return 2
    if not os.access(CHROMIUM, os.X_OK):
        say(f"FAILED: no Chromium at {CHROMIUM} (apt-get install chromium).")
        return 2
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="idle_pages-"))
    env = dict(os.environ, TFDASH_DB=str(tmp / "runs.sqlite3"))
    if not args.no_thread_names:
        (tmp / "site").mkdir()
        (tmp / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp / "site"), env.get("PYTHONPATH")]))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp / "streamlit.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed in finally
    cmd = [*streamlit_command(app_dir), *serve_args("streamlit_app.py", port)]
    say(f"server: {' '.join(cmd)}  (cwd {app_dir}, TFDASH_DB {env['TFDASH_DB']})")
    proc = subprocess.Popen(cmd, cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    pw = browser = None
    status = 1
    try:
        wait_healthy(url, proc, 90)
        pw = sync_playwright().start()
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        main_page = browser.new_page(viewport=VIEWPORT)
        main_page.goto(url, timeout=60_000)
        if not page_ready(main_page):
            raise Failed("the page did not show its controls (a Run button or an Epochs input) within 60 s")
        wait_idle(main_page)
        if args.start_cli:
            say(f"--start-cli: start a long run by hand at {url}; waiting up to {args.start_timeout:.0f} s.")
        else:
            say("started from the page: " + ", ".join(start_from_page(main_page, args.epochs)))
        how = wait_steady(main_page, proc.pid, args.start_timeout, args.settle)
        say(f"steady: {how}; measuring {args.seconds:.0f} s with 1 page")

        a = measure(proc.pid, args.seconds, lambda: page_epochs(main_page), os.getpid())
        extra = []
        for i in range(args.pages):
            p = browser.new_page(viewport=VIEWPORT)
            p.goto(url, timeout=60_000)
            if not page_ready(p):
                raise Failed(f"extra page {i + 1} did not show its controls within 60 s")
            extra.append(p)
        time.sleep(args.settle)
        say(f"opened {len(extra)} idle pages; measuring {args.seconds:.0f} s")
        b = measure(proc.pid, args.seconds, lambda: page_epochs(main_page), os.getpid())
        if b["epochs"] == 0:
            say("WARNING: no epoch finished during the second measurement: the run may have ended (raise --epochs).")
        report(a, b, args.pages, args.seconds)
        say(
            "stopping the run: "
            + ("pressed Stop" if stop_from_page(main_page) else "no Stop button; killing the server")
        )
        status = 0
    except Failed as err:
        say(f"FAILED: {err}. Server log: {log_path}")
        tail = log_path.read_text(errors="replace").splitlines()[-15:] if log_path.exists() else []
        for ln in tail:
            say(f"  | {ln}")
    except Exception as err:  # noqa: BLE001 - Playwright timeouts and the like: one sentence, then clean up
        say(f"FAILED: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}. Server log: {log_path}")
    finally:
        for closer in (browser and browser.close, pw and pw.stop):
            try:
                if closer:
                    closer()
            except Exception:  # noqa: BLE001
                pass
        stop_server(proc)
        log.close()
        if status == 0:
            shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
