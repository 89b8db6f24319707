"""python -m core devices: the CPU, GPUs and TensorFlow build of this machine, and each device's peak and bandwidth."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from core.cli.common import EXIT_OK, Command, fail
from core.language.i18n import _


def cmd_devices(args: argparse.Namespace) -> int:
    """List the CPU, GPUs and the TensorFlow/CUDA build (of every node, with a Ray cluster named)."""
    from core.cluster.connect import configured

    if configured():
        return cluster_devices(args.json)
    from core.engine import devices  # TensorFlow loads here, not for --help or the history commands
    from core.engine import limits as measured_limits

    info = devices.host_info()
    names = ["cpu"] + [f"gpu:{g.index}" for g in info.gpus]
    # Each device's float32 peak and bandwidth, the median of several tries with every try (core.engine.limits).
    limits = measured_limits.measure_all([devices.resolve(n) for n in names])
    if shared := os.environ.get(measured_limits.LIMITS_ENV):  # the server's check: its runs read them there
        with contextlib.suppress(OSError):  # each run then measures its own; the page still shows these
            measured_limits.write(shared, limits)
    if args.json:  # the host's description, and under "limits" each TF device's measured figures
        print(json.dumps({**info.to_dict(), "limits": limits}, indent=2))
        return EXIT_OK
    print(f"TensorFlow {info.tensorflow} (Keras {info.keras}), Python {info.python} on {info.hostname}")
    print(f"CPU   {info.cpu_model}, {info.cpu_cores} cores usable ({info.logical_cpus} logical TF device(s))")
    cuda = f"CUDA {info.cuda_build}, cuDNN {info.cudnn_build}" if info.cuda_build else "no CUDA (CPU-only build)"
    print(f"Build {cuda}")
    if not info.gpus:
        print(f"GPU   none visible. {devices.GPU_ADVICE}")
    for gpu in info.gpus:
        memory = f", {gpu.memory_mb:,} MiB" if gpu.memory_mb else ""
        print(f"GPU:{gpu.index} {gpu.name}, compute capability {gpu.compute_capability or '?'}{memory}")
    for name, measured in zip(names, limits.values(), strict=True):
        print(f"{name.upper():<5} {limits_words(measured)}")
    return EXIT_OK


def limits_words(measured: dict) -> str:
    """'peak 80 GFLOP/s (float32 matmul, median of 5 tries, 75-84), memory bandwidth 18.1 GB/s (...)'."""

    def said(value, tries, unit: str, what: str, digits: int) -> str:
        if not value:
            return _("not measured")
        spread = f", {min(tries):,.{digits}f}-{max(tries):,.{digits}f}" if tries else ""
        return _("{value} {unit} ({what}, median of {n} tries{spread})").format(
            value=f"{value:,.{digits}f}", unit=unit, what=what, n=len(tries), spread=spread
        )

    peak = said(measured["peak_gflops"], measured["peak_tries"], "GFLOP/s", _("float32 matmul"), 0)
    bandwidth = said(measured["bandwidth_gbs"], measured["bandwidth_tries"], "GB/s", _("float32 read-and-reduce"), 1)
    return _("peak {peak}, memory bandwidth {bandwidth}").format(peak=peak, bandwidth=bandwidth)


def cluster_devices(as_json: bool) -> int:
    """Each alive node of the Ray cluster: its name, host and devices, as the node lists them itself."""
    from core.cluster import connect, nodes

    try:
        address = connect.connect()
        answers = nodes.probe()
    except connect.ClusterError as err:
        return fail(str(err))
    if warning := connect.warning():
        print(warning, file=sys.stderr, flush=True)
    if as_json:
        rows = [
            {"node": a.node.name, "node_id": a.node.node_id, "host": a.host, "error": a.message or None}
            for a in answers
        ]
        print(json.dumps({"cluster": address, "nodes": rows}, indent=2))
        return EXIT_OK
    print(f"Ray cluster at {address}: {len(answers)} alive node(s); a device there is NODE/cpu, NODE/gpu:0, ...")
    for a in answers:
        h = a.host
        if a.message:
            print(f"{a.node.name:<12} {a.message}")
            continue
        gpus = ", ".join(f"gpu:{g['index']} {g['name']}" for g in h.get("gpus") or []) or "no GPU"
        print(
            f"{a.node.name:<12} {h.get('hostname')}: {h.get('cpu_model')}, {h.get('cpu_cores')} cores; {gpus}; "
            f"TensorFlow {h.get('tensorflow')}, Python {h.get('python')}"
        )
    return EXIT_OK


COMMAND = Command(
    "list the CPU, GPUs and TensorFlow build, with each device's measured peak and bandwidth",
    lambda p: p.add_argument("--json", action="store_true"),
    cmd_devices,
)
