"""What hardware the dashboard may train on (this machine's, a Ray cluster's nodes'), found without importing
TensorFlow in its process; and the Devices view's rows of it. Which runs a device mode makes is
core.settings.device_modes.

Finding GPUs needs TensorFlow (3-4 s to import, far more on a cold disk), so the dashboard asks a
subprocess (`python -m core devices --json`) from a background thread, once per server process,
and shows the page at once: CPU training needs no answer, GPU modes wait for one.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.cluster import messages
from core.cluster.connect import ADDRESS_ENV
from core.engine.devices import GPU_ADVICE
from core.engine.limits import share_path
from core.engine.limits import write as write_limits
from core.language.i18n import _
from core.machine import backends

ROOT = Path(__file__).resolve().parents[2]
# A file holding this machine's `python -m core devices --json` answer, taken for the server's check instead of
# running it again (tests/conftest.py checks once per test session; every server and page there reads it).
ANSWER_ENV = "TFDASH_HARDWARE_ANSWER"
# A cold first import of TensorFlow (and CUDA probing) can take a minute on a slow disk.
PROBE_TIMEOUT_S = 120

CHECKING, READY, FAILED = "checking", "ready", "failed"


@dataclass(frozen=True)
class Hardware:
    """The hardware check's answer: state, the host as `python -m core devices --json` prints it, why it failed."""

    state: str
    host: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    # A Ray cluster's nodes (TFDASH_RAY_ADDRESS), once they answered: {"name", "node_id", "host", "message"} each,
    # host as the node's own `python -m core devices --json`; and the cluster check's sentence ("" without one).
    nodes: tuple[dict[str, Any], ...] = ()
    cluster: str = ""
    # The cluster's address (TFDASH_RAY_ADDRESS): only the presenter's page shows it; and, for a cluster used without
    # token authentication (allowed), the warning every page shows.
    cluster_address: str = ""
    cluster_warning: str = ""

    @property
    def gpus(self) -> list[dict[str, Any]]:
        """GPUs TensorFlow can use here (none while checking or after a failed check)."""
        return list(self.host.get("gpus") or []) if self.state == READY else []


def _run_check(command: list[str], timeout: float) -> Hardware:
    # A fresh interpreter, not a fork of the workers' zygote (core.spawn): at a server's start its import of TensorFlow
    # runs beside the zygote's on the second core (answered in 14.8 s against 17.3 s forked, 2 cores, 4 starts each).
    try:
        # This machine's devices: without the cluster's address, which would make `devices` list the cluster's.
        env = {k: v for k, v in os.environ.items() if k != ADDRESS_ENV}
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Hardware(FAILED, message=f"The hardware check did not answer within {timeout:.0f} s, so GPUs are off.")
    except OSError as err:
        return Hardware(FAILED, message=f"The hardware check could not start ({err.strerror}), so GPUs are off.")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return Hardware(FAILED, message=f"The hardware check failed ({last}), so GPUs are off.")
    try:
        host = json.loads(done.stdout)
    except ValueError:
        return Hardware(FAILED, message="The hardware check printed something that is not JSON, so GPUs are off.")
    if not isinstance(host, dict):
        return Hardware(FAILED, message="The hardware check answered in an unknown format, so GPUs are off.")
    return Hardware(READY, host=host)


def _answered_before() -> Hardware | None:
    """The answer in the file ANSWER_ENV names, its limits written where this server's runs read them; None without
    one, or if it cannot be read as a check's answer (the check then runs)."""
    path = os.environ.get(ANSWER_ENV, "").strip()
    try:
        host = json.loads(Path(path).read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        return None
    if not isinstance(host, dict) or not isinstance(host.get("gpus"), list) or not isinstance(host.get("limits"), dict):
        return None
    with contextlib.suppress(OSError):  # as the check's own write: each run then measures its own
        write_limits(share_path(), host["limits"])
    return Hardware(READY, host=host)


class Prober:
    """Runs the check once on a daemon thread; any thread may read the answer. The process-wide one (`shared`)
    takes an answer given in ANSWER_ENV instead."""

    def __init__(self, command: list[str] | None = None, timeout: float = PROBE_TIMEOUT_S, shared: bool = False):
        self.command = command or [sys.executable, "-m", "core", "devices", "--json"]
        self.timeout = timeout
        self.shared = shared
        self._result = Hardware(CHECKING)
        self._started = False
        self._done = threading.Event()
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the check unless it has been started already."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._work, name="hardware-probe", daemon=True).start()

    def _work(self) -> None:
        self._result = (self.shared and _answered_before()) or _run_check(self.command, self.timeout)
        self._done.set()

    def result(self) -> Hardware:
        """The answer so far (state CHECKING until the subprocess has answered)."""
        return self._result

    def wait(self, timeout: float | None = None) -> Hardware:
        """Block until the check has answered (or timeout); return the answer so far."""
        self.start()
        self._done.wait(timeout)
        return self._result


class ClusterProber(Prober):
    """The Ray cluster's nodes and their devices (core.cluster), checked once on a daemon thread like this machine."""

    def __init__(self) -> None:
        super().__init__()  # its command is unused: _work asks the cluster instead
        self.nodes: tuple[dict[str, Any], ...] = ()
        self.sentence = ""
        self.warning = ""

    def _work(self) -> None:
        from core.cluster import connect, nodes  # Ray is imported here, off the page's first render

        self.sentence = messages.ASKING_AT.format(address=connect.configured())
        try:
            address = connect.connect()
            answers = nodes.probe()
        except connect.ClusterError as err:
            self.sentence = messages.ONLY_HERE.format(problem=err)
        else:
            self.nodes = tuple(
                {"name": a.node.name, "node_id": a.node.node_id, "host": a.host, "message": a.message} for a in answers
            )
            self.sentence = messages.FOUND.format(address=address, count=len(answers))
            self.warning = connect.warning() or ""
        self._done.set()


_default = Prober(shared=True)
_cluster = ClusterProber()


def start() -> None:
    """Start the process-wide hardware check (once), and the cluster's when TFDASH_RAY_ADDRESS names one.

    The check also measures each device's peak and bandwidth for this server: into the file LIMITS_ENV names (set
    here, so the check's subprocess and every worker the runner starts later inherit it), for every run to use.
    """
    share_path()
    _default.start()
    if os.environ.get(ADDRESS_ENV, "").strip():
        _cluster.start()


def wait_cluster(timeout: float | None = None) -> Hardware:
    """Wait for the process-wide cluster check (started by start()); the answer so far."""
    _cluster._done.wait(timeout)
    return result()


def result() -> Hardware:
    """The process-wide hardware check's answer so far, with the cluster's nodes once they have answered."""
    if not os.environ.get(ADDRESS_ENV, "").strip():
        return _default.result()
    sentence = _cluster.sentence or messages.ASKING
    return replace(
        _default.result(),
        nodes=_cluster.nodes,
        cluster=sentence,
        cluster_address=os.environ[ADDRESS_ENV].strip(),
        cluster_warning=_cluster.warning,
    )


def wait(timeout: float | None = None) -> Hardware:
    """Wait for the process-wide hardware check (started as start() starts it, if it was not)."""
    start()
    return _default.wait(timeout)


def host_rows(hardware: Hardware) -> list[tuple[str, str]]:
    """(what, details) rows describing the CPU, the TensorFlow build and each GPU, for a table."""
    h = hardware.host
    cudnn = f", cuDNN {h['cudnn_build']}" if h.get("cudnn_build") else ""
    cuda = f"CUDA {h['cuda_build']}{cudnn}" if h.get("cuda_build") else _("none (CPU-only)")
    if not h.get("cuda_build") and hardware.gpus:  # Apple's tensorflow-metal, or another PluggableDevice
        cuda = _("no CUDA; the GPU is a PluggableDevice")
    rows = [
        ("CPU", _("{model}, {cores} cores").format(model=h.get("cpu_model"), cores=h.get("cpu_cores"))),
        ("TensorFlow", f"{h.get('tensorflow')} (Keras {h.get('keras')}), Python {h.get('python')}"),
        ("Built with", cuda),
    ]
    for gpu in hardware.gpus:
        memory = f", {gpu['memory_mb']:,} MiB" if gpu.get("memory_mb") else ""
        capability = (
            _(", compute capability {cc}").format(cc=gpu["compute_capability"]) if gpu.get("compute_capability") else ""
        )
        backend, _how = backends.backend_of(f"gpu:{gpu['index']}", h)
        through = "" if backend.name == "cuda" else f" ({backend.label})"  # CUDA's is said under Built with
        rows.append((f"GPU:{gpu['index']}", f"{gpu['name']}{through}{capability}{memory}"))
    if not hardware.gpus:
        rows.append(("GPU", _("none found. {advice}").format(advice=_(GPU_ADVICE))))
    return rows
