"""A dataset a node lacks, shipped by the driver through Ray's object store: the files, read on the node as Keras'
cache.

The node looks for the files where Keras caches them (core.engine.data.keras_datasets_dir), so
unpacking them into a private KERAS_HOME in the job's own actor process (ended after the job)
leaves nothing behind on the node's disk but a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from core.engine import data as datasets


def _fashion() -> dict[str, Path]:
    for folder in (datasets.keras_datasets_dir() / "fashion-mnist", datasets.DEBIAN_FASHION_DIR):
        if all((folder / f).is_file() for f in datasets.FASHION_FILES):
            return {f"fashion-mnist/{f}": folder / f for f in datasets.FASHION_FILES}
    return {}


def _mnist() -> dict[str, Path]:
    path = datasets.keras_datasets_dir() / "mnist.npz"
    return {"mnist.npz": path} if path.is_file() else {}


# Dataset -> its files here, relative to Keras' datasets folder; a generated dataset ships nothing.
FILES = {"fashion_mnist": _fashion, "mnist": _mnist, "synthetic": dict}


def pack(name: str) -> Any:
    """The dataset's files as an object-store reference (None when it has none, or this machine lacks them too)."""
    import ray

    files = FILES[name]()
    return ray.put({rel: path.read_bytes() for rel, path in files.items()}) if files else None


def available_here(name: str) -> bool:
    """Whether this machine can load the dataset from its own disk."""
    return datasets.availability(name).available


def unpack(files: dict[str, bytes] | None) -> None:
    """On the node: write the shipped files (Ray resolved the reference) to a private Keras cache and use it."""
    if not files:
        return
    home = Path(tempfile.mkdtemp(prefix="tfdash-keras-"))
    for rel, payload in files.items():
        target = home / "datasets" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(payload)
    os.environ["KERAS_HOME"] = str(home)
