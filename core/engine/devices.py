"""What hardware there is, and turning a device name into a TensorFlow device string."""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from core.engine.tf_setup import tf
from core.language.i18n import N_
from core.machine import backends
from core.machine.device_spec import DeviceSpec
from core.settings.config import parse_device

GPU_ADVICE = N_(
    'To train on a GPU, install the CUDA build with pip install "tensorflow[and-cuda]" on a Linux '
    "machine with an NVIDIA driver, or pip install tensorflow tensorflow-metal on a Mac with Apple silicon, "
    "then check it with python -m core devices."
)


class DeviceError(RuntimeError):
    """The device asked for is not on this machine."""


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    compute_capability: str | None
    memory_mb: int | None
    backend: str = "cuda"  # core.machine.backends: cuda, metal (Apple's PluggableDevice) or pluggable


@dataclass(frozen=True)
class HostInfo:
    hostname: str
    platform: str
    python: str
    tensorflow: str
    keras: str
    cpu_model: str
    cpu_cores: int
    logical_cpus: int
    cuda_build: str | None
    cudnn_build: str | None
    gpus: list[GpuInfo] = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain dict for JSON."""
        return asdict(self)


def cpu_model() -> str:
    """The CPU's marketing name, from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "processor\t: ")) and ":" in line:
                    name = line.split(":", 1)[1].strip()
                    if name and not name.isdigit():
                        return name
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@lru_cache(maxsize=1)
def host_info() -> HostInfo:
    """Describe this machine: CPU, TensorFlow and CUDA builds, and every GPU."""
    t = tf()
    import keras

    build = t.sysconfig.get_build_info()
    gpus = [
        gpu_info(index, t.config.experimental.get_device_details(dev), build, platform.platform())
        for index, dev in enumerate(t.config.list_physical_devices("GPU"))
    ]
    return HostInfo(
        hostname=socket.gethostname(),
        platform=platform.platform(),
        python=platform.python_version(),
        tensorflow=t.__version__,
        keras=keras.__version__,
        cpu_model=cpu_model(),
        cpu_cores=cpu_cores(),
        logical_cpus=len(t.config.list_logical_devices("CPU")),
        cuda_build=build.get("cuda_version") or None,
        cudnn_build=build.get("cudnn_version") or None,
        gpus=gpus,
    )


def gpu_info(index: int, details: dict, build: dict, platform_name: str) -> GpuInfo:
    """One GPU from what TensorFlow says of it (get_device_details, get_build_info); CUDA is not assumed.

    A CUDA GPU has a compute capability; Apple's tensorflow-metal PluggableDevice reports only its name, "METAL".
    """
    cc = details.get("compute_capability")
    name = details.get("device_name") or f"GPU {index}"
    backend = backends.gpu_backend(name, cc, build.get("cuda_version"), platform_name)
    total = nvidia_smi(index, "memory.total") if backend == "cuda" else None  # TensorFlow does not report it
    return GpuInfo(
        index=index,
        name=name,
        compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
        memory_mb=total[0] if total else None,
        backend=backend,
    )


def nvidia_smi(index: int, *fields: str) -> list[int] | None:
    """GPU `index`'s numeric `fields` (memory.total, memory.used: MiB) from nvidia-smi, or None where it cannot say."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, f"--id={index}", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        return [int(v) for v in out.strip().splitlines()[0].split(",")]
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def gpu_count() -> int:
    """How many GPUs TensorFlow can use here."""
    return len(tf().config.list_physical_devices("GPU"))


def as_spec(device: DeviceSpec | str) -> DeviceSpec:
    """A config's DeviceSpec as it is; a name typed elsewhere (the CLI, a bench) parsed."""
    return device if isinstance(device, DeviceSpec) else parse_device(device)


def replicas(device: DeviceSpec | str) -> list[str]:
    """'gpu:all' -> ['/GPU:0', '/GPU:1', ...]: every device of that type here, for MirroredStrategy; [] for one
    device."""
    spec = as_spec(device)
    if not spec.mirrored:
        return []
    resolve(spec)  # none at all is the same sentence as for gpu:0
    found = tf().config.list_logical_devices(spec.device_type.upper())
    return [f"/{spec.device_type.upper()}:{i}" for i in range(len(found))]


def resolve(device: DeviceSpec | str) -> str:
    """Device ('cpu', 'gpu', 'gpu:1', 'cpu:1'; 'gpu:all': its first) -> TF device string ('/GPU:0'); raise if absent."""
    spec = as_spec(device)
    if spec.node:
        raise DeviceError(f"{spec} is a Ray node's device; this machine's are cpu, gpu and their numbers.")
    index_n = spec.number
    t = tf()
    if spec.device_type == "gpu":
        count = len(t.config.list_physical_devices("GPU"))
        if count == 0:
            raise DeviceError(f"No GPU is visible to TensorFlow {t.__version__} on this machine. {GPU_ADVICE}")
        if index_n >= count:
            raise DeviceError(f"There is no gpu:{index_n}; this machine has {count} GPU(s), gpu:0 to gpu:{count - 1}.")
        return spec.tf_name
    count = len(t.config.list_logical_devices("CPU"))
    if index_n >= count:
        raise DeviceError(
            f"There is no cpu:{index_n}; TensorFlow has {count} logical CPU device(s) here "
            f"(more can be made with TFDASH_LOGICAL_CPUS=N before start-up)."
        )
    return spec.tf_name


def short_device(tf_device: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> 'GPU:0'."""
    tail = tf_device.rsplit("device:", 1)[-1]
    return tail.lstrip("/").upper() if tail else tf_device


def describe(device: DeviceSpec | str) -> str:
    """A human name for a device: the GPU's name, or the CPU model (on a Ray node, its own device)."""
    spec = as_spec(device)
    if spec.device_type == "gpu":
        gpus = host_info().gpus
        if spec.mirrored:  # MirroredStrategy over every GPU of this host
            return " + ".join(g.name for g in gpus) or spec.local.upper()
        return gpus[spec.number].name if spec.number < len(gpus) else spec.local.upper()
    return cpu_model()
