"""Reading a TensorFlow profiler trace (an XSpace, tensorflow.tsl.profiler.protobuf.xplane_pb2): where a window of
traced steps spent its wall-clock time, by op category and, between ops, by what the host was doing.

An op is an event the trace names as one: a TensorFlow op ("scope/name:OpType", on any host thread), an XLA
instruction (an event with an `hlo_op` stat, whose op_type and op_name come from the HloProto that the trace's
metadata plane carries), a tf.data fetch, or on a GPU a kernel or copy on a `/device:GPU:N` plane. Ops that run at
once share their time equally, so the categories and the gaps partition the window's wall clock. A gap (no op
running) is named by the innermost event of the host's Python thread at that moment: in the function's execution
(the runtime between ops: scheduling, thread hand-offs), waiting for results (sync), launching kernels (a GPU's
host-side ops), any other TensorFlow call (dispatch), or none at all (Python, the program's own code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.results.measurements import GAPS, OPS

MARK = "tfdash_call"  # the zero-length event the tracing round puts between two calls of the step loop

MATMUL_TYPES = frozenset(
    "MatMul BatchMatMulV2 BatchMatMulV3 _MklMatMul _MklNativeFusedMatMul _FusedMatMul _MklNativeMatMul Einsum Conv2D "
    "Conv2DBackpropInput Conv2DBackpropFilter _MklNativeConv2D _MklNativeConv2DWithBias _FusedConv2D _MklFusedConv2D "
    "_MklNativeFusedConv2D _MklNativeConv2DBackpropInput _MklNativeConv2DBackpropFilter DepthwiseConv2dNative".split()
)
INPUT_TYPES = frozenset("GatherV2 ResourceGather Slice StridedSlice Copy _Send _Recv IteratorGetNext".split())
MATMUL_HLO, INPUT_HLO = ("dot", "convolution"), ("gather", "copy", "slice", "dynamic-slice", "bitcast", "transpose")
CONTAINERS = frozenset("While StatelessWhile If StatelessIf Case PartitionedCall StatefulPartitionedCall".split())
CONTAINER_HLO = frozenset("while call conditional tuple get-tuple-element parameter constant".split())
OPTIMIZER_SCOPES = re.compile(r"(^|/)(sgd|adam|optimizer|loss_scale_optimizer)(_\d+)?/", re.IGNORECASE)
LOSS_SCOPES = re.compile(r"crossentropy|compile_loss|(^|/)loss(_\d+)?/", re.IGNORECASE)
TF_OP = re.compile(r"^(?P<name>[^:\s]+):(?P<type>[A-Za-z_]\w*)$")
# The Python thread's events while a function executes (its graph's executor, an XLA program): a gap under one of
# them is the runtime between ops; XLA's CPU program waits in BlockUntilReady inside its own execution.
EXECUTING = ("KernelAndDeviceFunc::Run", "CpuExecutable::", "ThunkExecutor::")
SYNCING = ("BlockUntilReady", "TFE_TensorHandleResolve", "TFE_TensorHandleToNumpy", "EagerTensor::numpy")


def category(op_type: str, op_name: str = "", opcode: str = "") -> str:
    """Which of OPS an op is, from its TensorFlow type and name (an XLA instruction's: its metadata and opcode)."""
    if op_type in MATMUL_TYPES or opcode in MATMUL_HLO:
        return "matmul"
    if OPTIMIZER_SCOPES.search(op_name) or op_type.startswith("ResourceApply") or op_type.startswith("Assign"):
        return "optimizer"
    if LOSS_SCOPES.search(op_name) or "CrossEntropy" in op_type:
        return "loss"
    if op_type in INPUT_TYPES or opcode in INPUT_HLO or op_type.startswith("Memcpy") or op_type.startswith("Iterator"):
        return "input"
    return "elementwise"


def _hlo_ops(space) -> dict[str, tuple[str, str, str]]:
    """Every XLA instruction the trace's metadata plane describes: name -> (opcode, op_type, op_name)."""
    from tensorflow.compiler.xla.service import hlo_pb2

    found: dict[str, tuple[str, str, str]] = {}
    for plane in space.planes:
        if plane.name != "/host:metadata":
            continue
        for metadata in plane.event_metadata.values():
            for stat in metadata.stats:
                if not stat.bytes_value:
                    continue
                proto = hlo_pb2.HloProto()
                proto.ParseFromString(stat.bytes_value)
                for computation in proto.hlo_module.computations:
                    for i in computation.instructions:
                        found[i.name] = (i.opcode, i.metadata.op_type, i.metadata.op_name)
    return found


@dataclass(frozen=True)
class Span:
    """One event on the timeline, in picoseconds since the epoch; category is an OPS name, or the event's name."""

    start: int
    end: int
    category: str


def _stats(plane, event) -> dict[str, object]:
    out = {}
    for s in event.stats:
        name = plane.stat_metadata[s.metadata_id].name
        if s.ref_value:
            out[name] = plane.stat_metadata[s.ref_value].name
        else:
            out[name] = s.str_value or s.int64_value or s.uint64_value or s.double_value
    return out


def _op_category(plane, name: str, event, hlo: dict, device: bool) -> str | None:
    """The OPS category of an event that is an op, else None."""
    if device:  # a GPU's stream: every kernel and copy is device work
        stats = _stats(plane, event)
        if op := TF_OP.match(str(stats.get("tf_op", ""))):
            return category(op["type"], op["name"])
        opcode, op_type, op_name = hlo.get(str(stats.get("hlo_op", "")), ("", "", ""))
        return category(op_type or ("Memcpy" if "memcpy" in name.lower() else name), op_name, opcode)
    if name.startswith("IteratorGetNextOp::DoCompute"):
        return "input"
    if op := TF_OP.match(name):
        if op["type"] in CONTAINERS or op["type"].startswith("__inference"):
            return None
        return category(op["type"], op["name"])
    if not any(plane.stat_metadata[s.metadata_id].name == "hlo_op" for s in event.stats):
        return None
    opcode, op_type, op_name = hlo.get(name, ("", "", ""))
    if opcode in CONTAINER_HLO or (not opcode and name.split(".")[0] in CONTAINER_HLO):
        return None
    return category(op_type, op_name, opcode or name.split(".")[0])


def timeline(space) -> tuple[list[Span], list[Span], list[int], bool]:
    """(ops, the Python thread's events, the MARK times, whether ops came from a GPU's planes), from an XSpace."""
    hlo = _hlo_ops(space)
    gpu = [p for p in space.planes if p.name.startswith("/device:GPU") and any(line.events for line in p.lines)]
    ops, host, marks = [], [], []
    for plane in space.planes:
        device = plane in gpu
        if not device and plane.name != "/host:CPU":
            continue
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            python = line.name == "python"
            for e in line.events:
                name = plane.event_metadata[e.metadata_id].name
                start = base + e.offset_ps
                if name == MARK:
                    marks.append(start)
                    continue
                if e.duration_ps <= 0:
                    continue
                # On a GPU the device's planes hold the ops; the host's op events are it launching them.
                found = _op_category(plane, name, e, hlo, device) if device or not gpu else None
                if found is not None:
                    ops.append(Span(start, start + e.duration_ps, found))
                elif python or (gpu and not device and TF_OP.match(name)):
                    host.append(Span(start, start + e.duration_ps, "launch" if not python else name))
    return ops, host, sorted(marks), bool(gpu)


def _gap_category(events: list[Span]) -> str:
    """What the host was doing in a gap, from its open events: launching (a GPU's host-side ops), inside a function's
    execution (the runtime between ops), waiting for results (sync), in another TensorFlow call (dispatch), or none."""
    names = [e.category for e in events]
    if "launch" in names:
        return "launch"
    if any(n.startswith(EXECUTING) or n.startswith("__inference") for n in names):
        return "runtime"
    if not names:
        return "python"
    innermost = max(events, key=lambda e: (e.start, -e.end)).category
    return "sync" if innermost.startswith(SYNCING) else "dispatch"


def split(ops: list[Span], host: list[Span], start: int, end: int) -> dict[str, float]:
    """Seconds of [start, end] (picoseconds) by OPS category and by GAPS category: they partition the window."""
    edges = []
    for i, e in enumerate(ops):
        if e.end > start and e.start < end:
            edges += [(max(e.start, start), 1, i), (min(e.end, end), -1, i)]
    for i, e in enumerate(host):
        if e.end > start and e.start < end:
            edges += [(max(e.start, start), 2, i), (min(e.end, end), -2, i)]
    edges.sort(key=lambda x: (x[0], x[1] < 0))
    totals = dict.fromkeys(OPS + GAPS, 0.0)
    active: dict[str, int] = {}
    open_host: dict[int, Span] = {}
    now = start
    for at, what, i in edges + [(end, 0, -1)]:
        if at > now:
            seconds = (at - now) / 1e12
            running = sum(active.values())
            if running:
                for label, count in active.items():
                    totals[label] += seconds * count / running
            else:
                totals[_gap_category(list(open_host.values()))] += seconds
            now = at
        if what in (1, -1):
            label = ops[i].category
            active[label] = active.get(label, 0) + what
            if not active[label]:
                del active[label]
        elif what == 2:
            open_host[i] = host[i]
        elif what == -2:
            open_host.pop(i, None)
    return totals
