"""A device name as a user types it ('gpu', 'cpu:1', 'gpu:all', 'box/gpu:0'), parsed once into a typed value.

TensorFlow's words: tf.DeviceSpec names the same parts device_type and device_index; `node` is a Ray node
(core.cluster). core.settings.config builds one per run (TrainConfig.device_spec); the engine reads it, never the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# NODE/ names a Ray cluster's node (core.cluster): its Ray node name (`ray start --node-name`, by default its IP
# address) or the start of its node id. `:all` is MirroredStrategy over every device of that type on the host.
_DEVICE_RE = re.compile(r"^(?:([a-z0-9][a-z0-9._-]{0,62})/)?(cpu|gpu)(?::(\d{1,3}|all))?$")

DeviceIndex = int | Literal["all"] | None  # None: not given (the first device)


@dataclass(frozen=True)
class DeviceSpec:
    """One device name's parts: the Ray node (None: this machine), 'cpu' or 'gpu', the number ('all', None)."""

    node: str | None
    device_type: str
    device_index: DeviceIndex = None

    @property
    def local(self) -> str:
        """The name on its own machine: 'box/gpu:0' -> 'gpu:0'."""
        index = self.device_index
        return self.device_type if index is None else f"{self.device_type}:{index}"

    @property
    def mirrored(self) -> bool:
        """gpu:all / cpu:all: MirroredStrategy over every such device of the host."""
        return self.device_index == "all"

    @property
    def number(self) -> int:
        """The device's number; 0 for 'gpu' and for the first of 'gpu:all'."""
        return self.device_index if isinstance(self.device_index, int) else 0

    @property
    def tf_name(self) -> str:
        """TensorFlow's name of the (first) device: '/GPU:0'."""
        return f"/{self.device_type.upper()}:{self.number}"

    def __str__(self) -> str:
        return f"{self.node}/{self.local}" if self.node else self.local


def parse_device_name(value: object) -> DeviceSpec | None:
    """A name as a person types it: 'GPU' -> DeviceSpec(None, 'gpu'), ' Box/GPU:ALL ' -> DeviceSpec('box', 'gpu',
    'all'); None if not a device ('/gpu' too: a node's name comes before the slash)."""
    match = _DEVICE_RE.match(value.strip().lower()) if isinstance(value, str) else None
    if not match:
        return None
    node, device_type, index = match.groups()
    return DeviceSpec(node, device_type, None if index is None else index if index == "all" else int(index))


def device_name(name: str) -> DeviceSpec:
    """The parts of a name already checked (a config's, a stored run's) or TensorFlow's ('/GPU:0'); ValueError if
    not a device."""
    spec = parse_device_name(name.removeprefix("/"))
    if spec is None:
        raise ValueError(f"not a device name: {name!r}")
    return spec
