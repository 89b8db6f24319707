"""Backends: what a CPU, an NVIDIA (CUDA) GPU and Apple's Metal GPU each support, looked up, never assumed.

TensorFlow lists any GPU the same way (`tf.config.list_physical_devices("GPU")`), whether CUDA drives it
or a PluggableDevice such as Apple's `tensorflow-metal`. What differs is what the backend can do: XLA
compiles for CPUs and CUDA GPUs but not for Metal (Keras' own `model_supports_jit` says so), and bfloat16
needs an Ampere (compute capability 8.0) or later NVIDIA GPU. Light to import: no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.language.i18n import N_, _
from core.machine.device_spec import device_name
from core.settings.config import PRECISIONS, ConfigError

AMPERE = (8, 0)  # the first NVIDIA compute capability with bfloat16 tensor cores


def _any_precision(_: dict[str, Any], __: str) -> str | None:
    return None


def _cuda_precision(gpu: dict[str, Any], precision: str) -> str | None:
    capability = str(gpu.get("compute_capability") or "")
    major, _dot, minor = capability.partition(".")
    if precision != "mixed_bfloat16" or not major.isdigit():
        return None
    if (int(major), int(minor or 0)) >= AMPERE:
        return None
    return _("mixed_bfloat16 needs an NVIDIA GPU of compute capability 8.0 or later; this one has {cc}").format(
        cc=capability
    )


def _float_only(allowed: tuple[str, ...], device: str) -> Callable[[dict[str, Any], str], str | None]:
    def check(_: dict[str, Any], precision: str) -> str | None:
        return None if precision in allowed else f"{device} runs precision {' or '.join(allowed)} only"

    return check


@dataclass(frozen=True)
class Backend:
    """What one backend supports: XLA, what xla='auto' means on it, and which precisions it runs."""

    name: str
    label: str
    xla: bool  # XLA can compile for it
    xla_auto: bool  # what xla="auto" resolves to on it
    precision_problem: Callable[[dict[str, Any], str], str | None]  # (gpu info, precision) -> why not, or None


BACKENDS: dict[str, Backend] = {
    # On a CPU, "auto" is off, as Keras' jit_compile="auto" is on a machine without a GPU: XLA slows the
    # convolutions there, and a CPU run beside a GPU run should not change with the machine it is on.
    # The one exception (the multi-step loop of a dense model) is core.settings.config.XLA_ON_CPU.
    "cpu": Backend("cpu", "CPU", True, False, _any_precision),
    "cuda": Backend("cuda", "NVIDIA GPU (CUDA)", True, True, _cuda_precision),
    "metal": Backend(
        "metal", "Apple GPU (tensorflow-metal)", False, False, _float_only(("float32", "mixed_float16"), "Apple's GPU")
    ),
    # Any other PluggableDevice: nothing is assumed beyond float32 without XLA.
    "pluggable": Backend("pluggable", "GPU (a PluggableDevice)", False, False, _float_only(("float32",), "This GPU")),
}


def gpu_backend(name: str | None, compute_capability: Any, cuda_build: str | None, platform: str | None) -> str:
    """The backend of a GPU from what TensorFlow says of it: 'cuda', 'metal' or 'pluggable'."""
    # tensorflow-metal's device details name the device "METAL"; it only exists on macOS.
    if str(name or "").upper() == "METAL" or str(platform or "").lower().startswith(("macos", "darwin")):
        return "metal"
    if compute_capability or cuda_build:
        return "cuda"
    return "pluggable"


def backend_of(device: str, host: dict[str, Any]) -> tuple[Backend, dict[str, Any]]:
    """(backend, gpu info) of a device name ('cpu', 'gpu:1', 'gpu:all', 'node-b/gpu:0', '/GPU:0') on the host
    `python -m core devices --json` describes (for a Ray node's device: that node's host)."""
    spec = device_name(device)
    if spec.device_type != "gpu":
        return BACKENDS["cpu"], {}
    index = spec.number  # gpu:all: MirroredStrategy over one host's GPUs, as its first
    gpu = next((g for g in host.get("gpus") or [] if g.get("index") == index), {})
    # Nothing known of the machine (a script written for elsewhere): the common route, CUDA.
    name = (
        gpu.get("backend")
        or gpu.get("kind")
        or (  # "kind": what files written before 2026-12 call it
            gpu_backend(gpu.get("name"), gpu.get("compute_capability"), host.get("cuda_build"), host.get("platform"))
            if gpu or host
            else "cuda"
        )
    )
    return BACKENDS.get(name, BACKENDS["pluggable"]), gpu


# What runs but slowly, said before Run (slower is a result, not an error). Measured on a 2-core Xeon: a
# mixed_float16 MLP evaluates its 10,000 test images about 400x slower than in float32 (no float16 arithmetic).
SLOW = {
    ("cpu", "mixed_float16"): N_("most CPUs have no float16 arithmetic, so expect it many times slower than float32")
}


def slow_note(device: str, precision: str, host: dict[str, Any]) -> str | None:
    """Why this precision will run slowly on this device ('most CPUs have no float16 ...'), or None."""
    backend, _how = backend_of(device, host)
    note = SLOW.get((backend.name, precision))
    return _(note) if note else None


def resolve_xla(xla: str, backend: Backend, device: str) -> bool:
    """The jit_compile a run uses: xla 'on'/'off' as said, 'auto' by the device's backend; ConfigError where XLA cannot
    run."""
    if xla == "on" and not backend.xla:
        raise ConfigError(
            "xla",
            _("xla on is not possible on {device}: XLA does not compile for {backend}; use auto or off.").format(
                device=device.upper(), backend=backend.label
            ),
        )
    return {"on": True, "off": False}.get(xla, backend.xla_auto)


def check_precision(precision: str, backend: Backend, gpu: dict[str, Any], device: str) -> None:
    """ConfigError if the device cannot run this precision (a slow one runs: slower is a result)."""
    if precision not in PRECISIONS:
        said = _("precision must be one of {allowed}, not {value!r}.").format(
            allowed=", ".join(PRECISIONS), value=precision
        )
        raise ConfigError("precision", said)
    problem = backend.precision_problem(gpu, precision)
    if problem:
        said = _("precision {precision} cannot run on {device}: {problem}.")
        raise ConfigError("precision", said.format(precision=precision, device=device.upper(), problem=problem))


def check(device: str, precision: str, xla: str, host: dict[str, Any]) -> bool:
    """Check a run's precision and XLA against its device's backend; the jit_compile it will use."""
    backend, gpu = backend_of(device, host)
    check_precision(precision, backend, gpu, device)
    return resolve_xla(xla, backend, device)
