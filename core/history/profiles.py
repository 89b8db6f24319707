"""A run's profiler trace as TensorBoard's profile plugin (and XProf) read it: a log directory holding
plugins/profile/SESSION/HOST.xplane.pb, written to a folder (the CLI's --profile-dir) or as a .zip (the page)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from core.history.archive import zip_files
from core.history.paths import StoreError
from core.language.i18n import _

SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str, fallback: str = "run") -> str:
    """A file or folder name from any text: letters, digits, '.', '_' and '-' only, never '.' or '..' alone."""
    name = SAFE.sub("_", text).strip("._") or fallback
    return name[:100]


def profile_path(run_id: str, host: str) -> str:
    """Where a run's trace goes inside its log directory."""
    return f"plugins/profile/{safe_name(run_id)}/{safe_name(host, 'host')}.xplane.pb"


def xspace(trace_gz: bytes) -> bytes:
    """The XSpace's own bytes, from the gzipped copy the history keeps."""
    return gzip.decompress(trace_gz)


def write_profile_dir(directory: str | Path, run_id: str, host: str, trace_gz: bytes) -> Path:
    """Write the trace under `directory` (created if need be); the file written, or StoreError saying why not."""
    target = Path(directory) / profile_path(run_id, host)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(xspace(trace_gz))
    except OSError as err:
        said = _("The trace cannot be written to {path} ({text}).")
        raise StoreError(said.format(path=target, text=err.strerror or err)) from None
    return target


def profile_zip(traces: dict[str, tuple[str, bytes]]) -> bytes:
    """A .zip of log directories, one per run: {folder name: (host, gzipped trace)}; unzip, then tensorboard
    --logdir."""
    named = {safe_name(folder): (host, trace_gz) for folder, (host, trace_gz) in traces.items()}
    return zip_files({f"{run}/{profile_path(run, host)}": xspace(gz) for run, (host, gz) in named.items()})
