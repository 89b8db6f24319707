"""What hardware the dashboard may train on, found without importing TensorFlow in its process.

Finding GPUs needs TensorFlow (3-4 s to import, far more on a cold disk), so the dashboard asks a
subprocess (`python -m core devices --json`) from a background thread, once per server process,
and shows the page at once: CPU training needs no answer, GPU modes wait for one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core import device_kinds
from core.axes import AXES, Comparison
from core.cluster.connect import ADDRESS_ENV
from core.config import EXECUTIONS, ConfigError, TrainConfig, split_device
from core.engine.devices import GPU_ADVICE
from core.engine.limits import share_path
from core.i18n import N_, _

ROOT = Path(__file__).resolve().parents[1]
# A cold first import of TensorFlow (and CUDA probing) can take a minute on a slow disk.
PROBE_TIMEOUT_S = 120

CHECKING, READY, FAILED = "checking", "ready", "failed"


@dataclass(frozen=True)
class Probe:
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


def _run_probe(command: list[str], timeout: float) -> Probe:
    try:
        # This machine's devices: without the cluster's address, which would make `devices` list the cluster's.
        env = {k: v for k, v in os.environ.items() if k != ADDRESS_ENV}
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Probe(FAILED, message=f"The hardware check did not answer within {timeout:.0f} s, so GPUs are off.")
    except OSError as err:
        return Probe(FAILED, message=f"The hardware check could not start ({err.strerror}), so GPUs are off.")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return Probe(FAILED, message=f"The hardware check failed ({last}), so GPUs are off.")
    try:
        host = json.loads(done.stdout)
    except ValueError:
        return Probe(FAILED, message="The hardware check printed something that is not JSON, so GPUs are off.")
    if not isinstance(host, dict):
        return Probe(FAILED, message="The hardware check answered in an unknown format, so GPUs are off.")
    return Probe(READY, host=host)


class Prober:
    """Runs the check once on a daemon thread; any thread may read the answer."""

    def __init__(self, command: list[str] | None = None, timeout: float = PROBE_TIMEOUT_S):
        self.command = command or [sys.executable, "-m", "core", "devices", "--json"]
        self.timeout = timeout
        self._result = Probe(CHECKING)
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
        self._result = _run_probe(self.command, self.timeout)
        self._done.set()

    def result(self) -> Probe:
        """The answer so far (state CHECKING until the subprocess has answered)."""
        return self._result

    def wait(self, timeout: float | None = None) -> Probe:
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

        self.sentence = f"Asking the Ray cluster at {connect.configured()} for its nodes…"
        try:
            address = connect.connect()
            answers = nodes.probe()
        except connect.ClusterError as err:
            self.sentence = f"{err} Only this machine's devices are offered."
        else:
            self.nodes = tuple(
                {"name": a.node.name, "node_id": a.node.node_id, "host": a.host, "message": a.message} for a in answers
            )
            self.sentence = f"Ray cluster at {address}: {len(answers)} node(s)."
            self.warning = connect.warning() or ""
        self._done.set()


_default = Prober()
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


def wait_cluster(timeout: float | None = None) -> Probe:
    """Wait for the process-wide cluster check (started by start()); the answer so far."""
    _cluster._done.wait(timeout)
    return result()


def result() -> Probe:
    """The process-wide hardware check's answer so far, with the cluster's nodes once they have answered."""
    if not os.environ.get(ADDRESS_ENV, "").strip():
        return _default.result()
    sentence = _cluster.sentence or "Asking the Ray cluster for its nodes…"
    return replace(_default.result(), nodes=_cluster.nodes, cluster=sentence,
                   cluster_address=os.environ[ADDRESS_ENV].strip(), cluster_warning=_cluster.warning)  # fmt: skip


def wait(timeout: float | None = None) -> Probe:
    """Wait for the process-wide hardware check (started as start() starts it, if it was not)."""
    start()
    return _default.wait(timeout)


def host_rows(probe: Probe) -> list[tuple[str, str]]:
    """(what, details) rows describing the CPU, the TensorFlow build and each GPU, for a table."""
    h = probe.host
    cudnn = f", cuDNN {h['cudnn_build']}" if h.get("cudnn_build") else ""
    cuda = f"CUDA {h['cuda_build']}{cudnn}" if h.get("cuda_build") else _("none (CPU-only)")
    if not h.get("cuda_build") and probe.gpus:  # Apple's tensorflow-metal, or another PluggableDevice
        cuda = _("no CUDA; the GPU is a PluggableDevice")
    rows = [
        ("CPU", _("{model}, {cores} cores").format(model=h.get("cpu_model"), cores=h.get("cpu_cores"))),
        ("TensorFlow", f"{h.get('tensorflow')} (Keras {h.get('keras')}), Python {h.get('python')}"),
        ("Built with", cuda),
    ]
    for gpu in probe.gpus:
        memory = f", {gpu['memory_mb']:,} MiB" if gpu.get("memory_mb") else ""
        capability = (
            _(", compute capability {cc}").format(cc=gpu["compute_capability"]) if gpu.get("compute_capability") else ""
        )
        kind, _how = device_kinds.kind_of(f"gpu:{gpu['index']}", h)
        through = "" if kind.name == "cuda" else f" ({kind.label})"  # CUDA's is said under Built with
        rows.append((f"GPU:{gpu['index']}", f"{gpu['name']}{through}{capability}{memory}"))
    if not probe.gpus:
        rows.append(("GPU", _("none found. {advice}").format(advice=_(GPU_ADVICE))))
    return rows


# -- device modes: what the device picker offers, given the check's answer -------------------
@dataclass(frozen=True)
class Mode:
    """A device choice: one run, or two runs side by side that differ only in `runs`' overrides."""

    key: str
    label: str
    runs: tuple[dict[str, str], ...]
    needs_gpu: bool


def modes(probe: Probe) -> list[Mode]:
    """Every device mode, GPU ones included even when there is no GPU (so they can be shown as unavailable)."""
    gpus = [f"gpu:{g.get('index', i)}" for i, g in enumerate(probe.gpus)] or ["gpu:0"]
    names = {f"gpu:{g.get('index', i)}": g.get("name") for i, g in enumerate(probe.gpus)}
    first = gpus[0]
    found = [
        Mode("cpu", "CPU", ({"device": "cpu"},), False),
        *(Mode(g, f"{g.upper()} · {names[g]}" if names.get(g) else "GPU", ({"device": g},), True) for g in gpus),
        Mode("cpu-vs-gpu", "CPU vs GPU", ({"device": "cpu"}, {"device": first}), True),
        Mode("fit:cpu", _(FIT_LABEL).format(device=_("the CPU")), _fit_runs("cpu"), False),
        Mode("executions:cpu", _(EXECUTIONS_LABEL).format(device=_("the CPU")), _execution_runs("cpu"), False),
    ]
    if probe.gpus:
        found += [
            Mode(f"fit:{first}", _(FIT_LABEL).format(device=first.upper()), _fit_runs(first), True),
            Mode(f"executions:{first}", _(EXECUTIONS_LABEL).format(device=first.upper()), _execution_runs(first), True),
        ]
    return found + [mode for node in probe.nodes if not node.get("message") for mode in node_modes(node)]


def node_modes(node: dict[str, Any]) -> list[Mode]:
    """A Ray node's choices, each label naming its host: its CPU, a GPU, all its GPUs, and this CPU against its best."""
    name, host = node["name"], node["host"]
    where = f"{host.get('hostname') or name}"
    cpu = Mode(f"{name}/cpu", f"{name}/CPU · {where}", ({"device": f"{name}/cpu"},), False)
    found = host.get("gpus") or []
    # One GPU choice per node: Ray gives the job a free GPU and sets CUDA_VISIBLE_DEVICES, so it is gpu:0 there.
    which = f" (Ray gives one of {len(found)})" if len(found) > 1 else ""
    gpus = [
        Mode(f"{name}/gpu:0", f"{name}/GPU:0 · {found[0]['name']}{which} · {where}", ({"device": f"{name}/gpu:0"},), False)
    ] if found else []  # fmt: skip
    if len(found) > 1:  # MirroredStrategy trains through model.fit (core.config)
        runs = ({"device": f"{name}/gpu:all", "execution": "keras-fit"},)
        label = f"{name}/GPU:all ({len(found)} GPUs, MirroredStrategy) · {where}"
        gpus.append(Mode(f"{name}/gpu:all", label, runs, False))
    best = gpus[0] if gpus else cpu
    versus = Mode(f"cpu-vs-{best.key}", f"CPU here vs {best.label}", ({"device": "cpu"}, *best.runs), False)
    return [cpu, *gpus, versus]


FIT_LABEL = N_("Multi-step loop vs plain model.fit, on {device}")
EXECUTIONS_LABEL = N_("model.fit vs steps_per_execution vs multi-step loop, on {device}")


def _fit_runs(device: str) -> tuple[dict[str, str], ...]:
    # The plain model.fit run first: it is the baseline the multi-step loop is measured against.
    return ({"device": device, "execution": "keras-fit"}, {"device": device, "execution": "multi-step-loop"})


def _execution_runs(device: str) -> tuple[dict[str, str], ...]:
    # Every execution mode, plain model.fit (the baseline) first, in core.config.EXECUTIONS' order.
    return tuple({"device": device, "execution": name} for name in EXECUTIONS)


def unavailable(mode: Mode, probe: Probe) -> str | None:
    """Why `mode` cannot run here ('no GPU found on this machine'), or None if it can."""
    if not mode.needs_gpu:
        return None
    reasons: dict[str, Callable[[], str | None]] = {
        CHECKING: lambda: _("still checking for GPUs"),
        FAILED: lambda: _("the hardware check failed, so GPUs are off"),
        READY: lambda: None if probe.gpus else _("no GPU found on this machine"),
    }
    return reasons[probe.state]()


def plan(
    settings: dict[str, Any], mode_key: str, probe: Probe, comparison: Comparison | None = None
) -> list[TrainConfig]:
    """The validated configs to submit for `mode_key`, or along `comparison`'s axis on that mode's device.

    ConfigError (one sentence, nothing queued) if a setting is bad, a device absent, or a device's kind
    cannot run a precision or XLA choice (core.device_kinds).
    """
    by_key = {m.key: m for m in modes(probe)}
    mode = by_key.get(mode_key)
    if mode is None:
        raise ConfigError("device", f"device mode must be one of {', '.join(by_key)}, not {mode_key!r}.")
    runs = mode.runs
    if comparison is not None:
        # Along an axis: the Device choice's device (its last, for a pair: the GPU of CPU vs GPU), every value on it.
        field = AXES[comparison.axis].field
        runs = tuple({**mode.runs[-1], field: value} for value in comparison.values)
        mode = Mode(mode.key, mode.label, runs, mode.needs_gpu and field != "device")
    reason = unavailable(mode, probe)
    if reason is not None:
        raise ConfigError("device", _("{mode} cannot run here: {reason}.").format(mode=mode.label, reason=reason))
    configs = [TrainConfig(**{**settings, **overrides}) for overrides in runs]
    for config in configs:
        node, local = split_device(config.device)
        if node is None and local.startswith("gpu") and (why := unavailable(Mode("", "", (), True), probe)):
            raise ConfigError(
                "device", _("{mode} cannot run here: {reason}.").format(mode=config.device.upper(), reason=why)
            )
        # A Ray node's device is judged by that node's own host description.
        host = next((n.get("host") or {} for n in probe.nodes if n.get("name") == node), {}) if node else probe.host
        device_kinds.check(config.device, config.precision, config.xla, host)
    return configs
