"""Each device's peak and bandwidth, measured once per server (or per CLI process) and shared by every run it starts.

A figure is the median of core.engine.peak's TRIES tries, with the tries kept. The dashboard's hardware check
(`python -m core devices --json`, started with the server, in the background: core.machine.hardware_check) measures
them before anyone presses Run, and writes them to the file that LIMITS_ENV names: the server sets it
(core.machine.hardware_check.start) before the check and its runner start, so the check and every worker inherit it. A
run there takes the server's figures (waiting for the check if it has not answered yet) and measures one quick try of
its own peak beside them, so a run on a busier machine says so; every run of a comparison is held against the same
roofs. Without the variable (the CLI, a bench) a process measures once and its runs share that.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from core.engine import peak
from core.polling import poll_until

LIMITS_ENV = "TFDASH_LIMITS"
WAIT_SECONDS = 30.0  # at most, for the server's check; then the run measures its own


def measure(tf_device: str, dtype: str = "float32") -> dict:
    """This process's figures for `tf_device` (measured once, median of TRIES tries), as a device info's fields."""
    info: dict = {"peak_gflops": None, "peak_tries": [], "bandwidth_gbs": None, "bandwidth_tries": []}
    try:
        found = peak.measure(tf_device, dtype)
        info.update(peak_gflops=found.gflops, peak_tries=list(found.tries))
    except Exception:  # noqa: BLE001 - a failed measurement is "not measured", never a failed run
        pass
    try:
        moved = peak.measure_bandwidth(tf_device)
        info.update(bandwidth_gbs=moved.gbs, bandwidth_tries=list(moved.tries))
    except Exception:  # noqa: BLE001
        pass
    return info


# A round of tries whose fastest is more than this times its slowest was disturbed (another process, a worker
# importing TensorFlow as the server starts): the check tries again, up to ROUNDS rounds, and keeps the best.
STEADY = 1.25
ROUNDS = 3
PAUSE_SECONDS = 2.0


def measure_all(tf_devices: list[str]) -> dict[str, dict]:
    """Every device's float32 figures, a steady round of tries each: what `devices --json` carries under "limits"."""
    found = {}
    for tf_device in tf_devices:
        best: dict = {}
        for attempt in range(ROUNDS):
            if attempt:
                time.sleep(PAUSE_SECONDS)
            peak.clear()  # a fresh round: this process's figures are the kept round's
            info = measure(tf_device)
            if (info["peak_gflops"] or 0) > (best.get("peak_gflops") or 0):
                best = info
            tries = info["peak_tries"]
            if not tries or max(tries) <= STEADY * min(tries):
                break
        found[tf_device] = {**best, "rounds": attempt + 1}
    return found


def share_path() -> str:
    """The file this server's figures go to, named in LIMITS_ENV (set now if it is not): its workers inherit it."""
    if not os.environ.get(LIMITS_ENV):
        os.environ[LIMITS_ENV] = str(Path(tempfile.gettempdir()) / f"tfdash-limits-{os.getpid()}.json")
    return os.environ[LIMITS_ENV]


def write(path: str, limits: dict[str, dict]) -> None:
    """Write the figures atomically: a reader sees the old file or the new one, never half of one."""
    target = Path(path)
    spare = target.with_name(target.name + ".part")
    spare.write_text(json.dumps(limits), encoding="utf-8")
    os.replace(spare, target)


def shared(tf_device: str, wait: float = WAIT_SECONDS, should_stop=None) -> dict | None:
    """The server's float32 figures for `tf_device`, waiting up to `wait` s for its check (less if should_stop() says
    stop); None without a server."""
    path = os.environ.get(LIMITS_ENV)
    if not path:
        return None
    poll_until(lambda: os.path.exists(path), wait, 0.1, should_stop or (lambda: False))  # the server writes it
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8")).get(tf_device)
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) and found.get("peak_gflops") else None


def for_run(tf_device: str, dtype: str = "float32", should_stop=None) -> dict:
    """The device info's limits for a run: the server's where there is one (float32), with the run's own quick try of
    the peak (own_peak_gflops) beside them; else this process's. peak_source says which."""
    found = shared(tf_device, should_stop=should_stop) if dtype == "float32" else None
    if found is None:
        return {**measure(tf_device, dtype), "peak_source": "process"}
    try:
        own: float | None = peak.benchmark(tf_device, dtype, tries=1).gflops
    except Exception:  # noqa: BLE001
        own = None
    keys = ("peak_gflops", "peak_tries", "bandwidth_gbs", "bandwidth_tries")
    return {**{k: found.get(k) for k in keys}, "peak_source": "server", "own_peak_gflops": own}
