"""python -m core devices: the CPU, GPUs and TensorFlow build of this machine, and each device's peak and bandwidth."""

from __future__ import annotations

import argparse
import json
import sys

from core.cli.common import EXIT_OK, Command, fail


def cmd_devices(args: argparse.Namespace) -> int:
    """List the CPU, GPUs and the TensorFlow/CUDA build (of every node, with a Ray cluster named)."""
    from core.cluster.connect import configured

    if configured():
        return cluster_devices(args.json)
    from core.engine import devices  # TensorFlow loads here, not for --help or the history commands

    info = devices.host_info()
    if args.json:  # the host's description only, a stable format; the measured limits are in each run's file
        print(json.dumps(info.to_dict(), indent=2))
        return EXIT_OK
    limits = {name: _limits(name) for name in ["cpu"] + [f"gpu:{g.index}" for g in info.gpus]}
    print(f"TensorFlow {info.tensorflow} (Keras {info.keras}), Python {info.python} on {info.hostname}")
    print(f"CPU   {info.cpu_model}, {info.cpu_cores} cores usable ({info.logical_cpus} logical TF device(s))")
    cuda = f"CUDA {info.cuda_build}, cuDNN {info.cudnn_build}" if info.cuda_build else "no CUDA (CPU-only build)"
    print(f"Build {cuda}")
    if not info.gpus:
        print(f"GPU   none visible. {devices.GPU_ADVICE}")
    for gpu in info.gpus:
        memory = f", {gpu.memory_mb:,} MiB" if gpu.memory_mb else ""
        print(f"GPU:{gpu.index} {gpu.name}, compute capability {gpu.compute_capability or '?'}{memory}")
    for name, measured in limits.items():
        peak, bandwidth = measured["peak_gflops"], measured["bandwidth_gbs"]
        print(
            f"{name.upper():<5} peak {f'{peak:,.0f} GFLOP/s' if peak else 'not measured'} (float32 matmul), "
            f"memory bandwidth {f'{bandwidth:,.1f} GB/s' if bandwidth else 'not measured'} (float32 read-and-reduce)"
        )
    return EXIT_OK


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
        print(f"{a.node.name:<12} {h.get('hostname')}: {h.get('cpu_model')}, {h.get('cpu_cores')} cores; {gpus}; "
              f"TensorFlow {h.get('tensorflow')}, Python {h.get('python')}")  # fmt: skip
    return EXIT_OK


def _limits(name: str) -> dict[str, float | None]:
    """A device's measured peak and bandwidth; None for one that could not be measured."""
    from core.engine import devices, peak
    from core.engine.job import measure_peak

    tf_device = devices.resolve(name)
    measured = measure_peak(tf_device)
    try:
        bandwidth: float | None = peak.measure_bandwidth(tf_device).gbs
    except Exception:  # noqa: BLE001 - a failed measurement is said, not a failed command
        bandwidth = None
    return {"peak_gflops": measured.gflops if measured else None, "bandwidth_gbs": bandwidth}


COMMAND = Command(
    "list the CPU, GPUs and TensorFlow build, with each device's measured peak and bandwidth",
    lambda p: p.add_argument("--json", action="store_true"),
    cmd_devices,
)
