"""python -m core devices: the CPU, GPUs and TensorFlow build of this machine."""

from __future__ import annotations

import argparse
import json

from core.cli.common import EXIT_OK, Command


def cmd_devices(args: argparse.Namespace) -> int:
    """List the CPU, GPUs and the TensorFlow/CUDA build."""
    from core.engine import devices  # TensorFlow loads here, not for --help or the history commands

    info = devices.host_info()
    if args.json:
        print(json.dumps(info.to_dict(), indent=2))
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
    return EXIT_OK


COMMAND = Command(
    "list the CPU, GPUs and TensorFlow build", lambda p: p.add_argument("--json", action="store_true"), cmd_devices
)
