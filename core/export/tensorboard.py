"""Runs as a TensorBoard log directory: one folder per run, named for what the runs compare, holding its scalars per
epoch and per call, its HParams session, and its profiler trace under plugins/profile/, so `tensorboard --logdir`
(and its HParams and profile plugins) opens what the page showed.

Each event carries the run's own clock: its wall time is the run's start plus the training seconds when the point
was reached (evaluation excluded, as the page's time axis), so TensorBoard's Relative axis reads as the page's. An
event file is TFRecords of Event protos (TensorFlow's own writer and protos, imported on the first write: the CLI, or
a subprocess of the page); tf.summary's writers stamp every event with the moment it was written, so this file would
hold the export's clock, not the run's. The HParams plugin's protos are TensorBoard's, which is not a runtime
dependency: their few fields are encoded here and read back by TensorBoard's own parser in the tests.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from core.analysis import compare
from core.history import profiles
from core.history.paths import StoreError
from core.results import RunResult
from core.results.states import State

# Folder names: letters of any script, digits, '.', '_', '-' and '='; never a path's separator or '..'.
UNSAFE = re.compile(r"[^\w.=-]+")
EXPERIMENT_FILE = "events.out.tfevents.0.tfdash-experiment"
RUN_FILE = "events.out.tfevents.{start}.tfdash"  # one per run, so exporting it again replaces it
STEADY_RATE = "samples_per_second/steady"
FINAL_ACCURACY = "accuracy/test"
HPARAMS = ("device", "variables_on", "execution", "model", "batch_size", "learning_rate", "precision", "xla")
METRICS = ((FINAL_ACCURACY, "test accuracy (final)"), (STEADY_RATE, "samples / s (steady)"))
STATUS = {
    State.COMPLETED: 1,
    State.FAILED: 2,
    State.RUNNING: 3,
}  # tensorboard.hparams.Status; anything else: unknown (0)


def folder_name(text: str) -> str:
    """A directory name from any text (a run id, a label): never empty, '.', '..' or holding a separator."""
    return UNSAFE.sub("_", text).strip("._")[:100] or "run"


def folder_names(results: list[RunResult]) -> list[str]:
    """Each run's folder, named for what the runs compare: its id, then the settings that differ among them (for
    one run, its device and execution)."""
    keys = [k for k in dict.fromkeys(k for r in results for k in r.config) if k not in ("node", "seed")]
    differ = [k for k in keys if len({repr(r.config.get(k)) for r in results}) > 1] or ["device", "execution"]
    names = [folder_name("-".join([r.run_id or "run", *(f"{k}={r.config.get(k)}" for k in differ)])) for r in results]
    return [n if names.count(n) == 1 else f"{n}-{i + 1}" for i, n in enumerate(names)]


def hparams(result: RunResult) -> dict[str, Any]:
    """The run's settings as the HParams plugin shows them: XLA as it ran (jit_compile), not as asked."""
    config, device = result.config, result.device
    found = {k: config.get(k) for k in HPARAMS if k in config}
    found |= {"variables_on": device.get("variables_on"), "batch_size": compare.global_batch(result)}
    found["xla"] = "on" if device.get("jit_compile") else "off"
    return {k: v for k in HPARAMS if (v := found.get(k)) is not None}


def started(result: RunResult) -> float:
    """The run's start, in seconds since the epoch (0 where unrecorded)."""
    try:
        return datetime.fromisoformat(result.started_at).timestamp() if result.started_at else 0.0
    except ValueError:
        return 0.0


def scalars(result: RunResult) -> Iterator[tuple[str, float, int, float]]:
    """(tag, value, step, wall time) of every point: per epoch (step: the epoch), per call (step: samples trained)."""
    start, clock = started(result), 0.0
    for e in result.epochs:
        for c in e.calls:
            wall = start + c.seconds
            yield "calls/train_accuracy", c.train_accuracy, c.samples, wall
            yield "calls/train_loss", c.train_loss, c.samples, wall
        clock += e.train_seconds
        wall, n = start + clock, e.epoch
        yield "accuracy/train", e.train_accuracy, n, wall
        yield FINAL_ACCURACY, e.test_accuracy, n, wall
        yield "loss/train", e.train_loss, n, wall
        yield "loss/test", e.test_loss, n, wall
        yield f"seconds_per_epoch/{'warmup' if e.warmup else 'steady'}", e.train_seconds, n, wall
    rate = compare.throughput(result)
    if rate is not None and result.epochs:
        yield STEADY_RATE, rate, result.epochs[-1].epoch, start + clock


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | str) -> bytes:
    """A length-delimited protobuf field (a message, string or bytes)."""
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _double(number: int, value: float) -> bytes:
    return _varint(number << 3 | 1) + struct.pack("<d", value)


def _enum(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value) if value else b""


def _value(value: Any) -> bytes:
    """A google.protobuf.Value: a number, a bool or a string."""
    if isinstance(value, bool):
        return _varint(4 << 3) + _varint(int(value))
    if isinstance(value, int | float):
        return _double(2, float(value))
    return _field(3, str(value))


def session_start(result: RunResult, group: str) -> bytes:
    """HParamsPluginData{session_start_info: SessionStartInfo{hparams, group_name, start_time_secs}}."""
    entries = b"".join(_field(1, _field(1, k) + _field(2, _value(v))) for k, v in hparams(result).items())
    return _field(3, entries + _field(4, group) + _double(5, started(result)))


def session_end(result: RunResult, ended: float) -> bytes:
    """HParamsPluginData{session_end_info: SessionEndInfo{status, end_time_secs}}."""
    return _field(4, _enum(1, STATUS.get(result.status, 0)) + _double(2, ended))


def experiment(results: list[RunResult]) -> bytes:
    """HParamsPluginData{experiment}: the hparams the runs hold (strings or numbers; `differs` where the runs differ
    in it, which TensorBoard's HParams table shows first) and the two metrics."""
    held = [hparams(r) for r in results]
    infos = b""
    for k in dict.fromkeys(k for h in held for k in h):
        values = [h.get(k) for h in held]
        data_type = 3 if all(isinstance(v, int | float) for v in values if v is not None) else 1  # FLOAT64, else STRING
        differs = _varint(7 << 3) + b"\x01" if len({repr(v) for v in values}) > 1 else b""
        infos += _field(4, _field(1, k) + _enum(4, data_type) + differs)
    metrics = b"".join(_field(5, _field(1, _field(2, tag)) + _field(3, said)) for tag, said in METRICS)
    return _field(2, infos + metrics)


def _tf():
    """TensorFlow's record writer and protos, on the first write only (4 s to import)."""
    import tensorflow as tf
    from tensorflow.core.framework import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
    from tensorflow.core.util import event_pb2

    return tf, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2, event_pb2


class _Events:
    """One event file: a file_version record first, then Events with one summary value each."""

    def __init__(self, path: Path, wall: float):
        self.tf, self.summary, self.tensor, self.shape, self.types, self.event = _tf()
        self._writer = self.tf.io.TFRecordWriter(str(path))
        self._write(self.event.Event(wall_time=wall, file_version="brain.Event:2"))

    def _write(self, event) -> None:
        self._writer.write(event.SerializeToString())

    def scalar(self, tag: str, value: float, step: int, wall: float) -> None:
        """A float32 scalar, as tf.summary.scalar writes one: TensorBoard's data server reads no other dtype (a
        float64 scalar showed no chart), so a figure is the run's own rounded to float32's 7 digits."""
        s = self.summary
        meta = s.SummaryMetadata(plugin_data=s.SummaryMetadata.PluginData(plugin_name="scalars"))
        meta.data_class = s.DATA_CLASS_SCALAR
        shape = self.shape.TensorShapeProto()
        tensor = self.tensor.TensorProto(dtype=self.types.DT_FLOAT, tensor_shape=shape, float_val=[value])
        self._summary(s.Summary.Value(tag=tag, metadata=meta, tensor=tensor), step, wall)

    def hparams(self, tag: str, content: bytes, wall: float) -> None:
        """A summary of the HParams plugin: its data in the metadata, an empty tensor as TensorBoard writes."""
        s = self.summary
        meta = s.SummaryMetadata(plugin_data=s.SummaryMetadata.PluginData(plugin_name="hparams", content=content))
        empty = self.shape.TensorShapeProto(dim=[self.shape.TensorShapeProto.Dim(size=0)])
        tensor = self.tensor.TensorProto(dtype=self.types.DT_FLOAT, tensor_shape=empty)
        self._summary(s.Summary.Value(tag=tag, metadata=meta, tensor=tensor), 0, wall)

    def _summary(self, value, step: int, wall: float) -> None:
        self._write(self.event.Event(wall_time=wall, step=step, summary=self.summary.Summary(value=[value])))

    def close(self) -> None:
        self._writer.close()


def write_run(folder: Path, result: RunResult, group: str, trace: bytes | None) -> None:
    """The run's events file (its scalars and HParams session) in `folder`, and its trace where it has one."""
    folder.mkdir(parents=True, exist_ok=True)
    start = started(result)
    events = _Events(folder / RUN_FILE.format(start=int(start)), start)
    try:
        events.hparams("_hparams_/session_start_info", session_start(result, group), start)
        wall = start
        for tag, value, step, wall in scalars(result):
            events.scalar(tag, value, step, wall)
        events.hparams("_hparams_/session_end_info", session_end(result, wall), wall)
    finally:
        events.close()
    if trace:
        profiles.write_profile_dir(folder, result.run_id or "run", result.host.get("hostname") or "host", trace)


def write_logdir(directory: str | Path, results: list[RunResult], traces: dict[str, bytes] | None = None) -> list[Path]:
    """Write the runs into `directory` (created if need be) as one log directory: a folder per run (with its trace
    from `traces`, gzipped XSpaces by run id) and the HParams experiment at the top. The folders written; StoreError
    saying why where it cannot be written."""
    top = Path(directory)
    folders = [top / name for name in folder_names(results)]
    try:
        top.mkdir(parents=True, exist_ok=True)
        events = _Events(top / EXPERIMENT_FILE, max((started(r) for r in results), default=0.0))
        try:
            events.hparams("_hparams_/experiment", experiment(results), 0.0)
        finally:
            events.close()
        for folder, result in zip(folders, results, strict=True):
            write_run(folder, result, folder.name, (traces or {}).get(result.run_id or ""))
    except OSError as err:
        raise StoreError(f"The TensorBoard log cannot be written to {top} ({err.strerror or err}).") from None
    except Exception as err:  # TensorFlow's writer raises its own errors (an OpError), said as the same sentence
        if not type(err).__module__.startswith("tensorflow"):
            raise
        raise StoreError(f"The TensorBoard log cannot be written to {top} ({err.message}).") from None
    return folders
