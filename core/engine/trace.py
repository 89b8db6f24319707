"""A window of the run's own step, traced by TensorFlow's profiler outside the timed epochs, and read back.

After epoch 1 (core.engine.training.measure_device), a throwaway copy of the run's step (the same execution mode,
config, data and jit_compile, a fresh model) runs with its calls sized as the run's are: one call that traces (and
with XLA compiles) it, then a window of calls timed untraced, then the same number of calls under
tf.profiler.experimental, with a zero-length MARK event between calls. The window's first call holds any set-up, so
the step is read from the first MARK to the last, as the run's own pace is read from its calls after an epoch's
first. What the trace says of that window (core.engine.xspace) and what tracing cost are a TraceSummary; the XSpace
file itself goes with the run (gzipped), for TensorBoard's profile plugin or XProf.
"""

from __future__ import annotations

import gzip
import tempfile
import time
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

from core.engine import models, xspace
from core.engine.executions import REGISTRY
from core.engine.job import Cancelled
from core.engine.tf_setup import tf
from core.language.i18n import N_
from core.results.measurements import TraceSummary
from core.settings.config import TRAIN_SIZES

# A window lasts at least WINDOW_SECONDS and MIN_STEPS steps after its first call, whole calls, at most MAX_STEPS.
WINDOW_SECONDS, MIN_STEPS, MAX_STEPS = 0.03, 20, 200  # 200 of the tutorial's steps: a 1 MB trace
WINDOW_BATCHES = 200  # the copy's data, where the run's calls are short
SLICES = 10  # the window cut in equal times (at most one a step): how much its parts vary within it (core.analysis.why)


class _Window:
    """should_stop() for one window: notes each call's end (and marks it in a trace), stops after `calls` calls past
    the first, or where `calls` is None, once the calls since the first have lasted WINDOW_SECONDS and MIN_STEPS."""

    def __init__(self, execution, calls: int | None, mark) -> None:
        self.execution, self.calls, self.mark = execution, calls, mark
        self.ends: list[tuple[float, int]] = []  # (perf_counter, steps done) at each call's end

    def note(self) -> None:
        marks = self.execution.marks
        if marks and (not self.ends or marks[-1][1] > self.ends[-1][1]):
            self.mark()
            self.ends.append((time.perf_counter(), int(marks[-1][1])))

    def __call__(self) -> bool:
        self.note()
        done = len(self.ends) - 1
        if self.calls is not None:
            return done >= self.calls
        return done > 0 and (self.steps >= MAX_STEPS or self.steps >= MIN_STEPS and self.seconds >= WINDOW_SECONDS)

    @property
    def steps(self) -> int:
        return self.ends[-1][1] - self.ends[0][1] if len(self.ends) > 1 else 0

    @property
    def seconds(self) -> float:
        return self.ends[-1][0] - self.ends[0][0]


def _run_window(execution, calls: int | None, mark=lambda: None) -> _Window:
    window = _Window(execution, calls, mark)
    execution.prepare_epoch()
    try:
        execution.train_epoch(window)
    except Cancelled:
        pass
    window.note()  # an epoch that ended first: its last call, which no stop check followed
    return window


def _mark() -> None:
    with tf().profiler.experimental.Trace(xspace.MARK):
        pass


class TraceFailed(RuntimeError):
    """No window of the step could be traced; the message says why, in words the page shows."""


def trace(config, data, jit_compile: bool, run_execution) -> tuple[TraceSummary, bytes]:
    """Trace a window of the run's step on a throwaway copy (call inside the run's scope); TraceFailed says why not."""
    began = time.perf_counter()
    # Rows for a few of the run's calls or a window of short ones, not the whole epoch: its set-up is in each window.
    wanted = config.batch_size * max(3 * run_execution.call_steps(), WINDOW_BATCHES)
    small = data.head(min(wanted, TRAIN_SIZES[config.dataset]))  # a config holds at most the dataset's own size
    model = models.build(config.model, config.hidden_units, config.precision)
    copy = REGISTRY[config.execution](replace(config, train_subset=len(small.x_train)), model, small, jit_compile)
    copy.calls_like(run_execution)
    _run_window(copy, 1)  # traces (and with XLA compiles) the step
    plain = _run_window(copy, None)
    if plain.steps == 0:
        raise TraceFailed(N_("the copy's epoch ended within one call, so no window of calls could be timed"))
    calls = len(plain.ends) - 1
    t = tf()
    with tempfile.TemporaryDirectory(prefix="tfdash-trace-") as logdir:
        options = t.profiler.experimental.ProfilerOptions(
            host_tracer_level=2, python_tracer_level=0, device_tracer_level=1
        )
        t.profiler.experimental.start(logdir, options=options)
        try:
            traced = _run_window(copy, calls, _mark)
        finally:
            t.profiler.experimental.stop()
        files = sorted(Path(logdir).rglob("*.xplane.pb"))
        if not files or traced.steps == 0:
            raise TraceFailed(N_("the profiler wrote no trace") if not files else N_("the traced window ran no steps"))
        raw = files[0].read_bytes()
    summary = read(raw, traced.steps)
    if summary is None:
        raise TraceFailed(N_("the trace holds no marks between the step's calls"))
    cost = time.perf_counter() - began
    found = TraceSummary(
        steps=traced.steps,
        calls=calls,
        batch=config.batch_size,
        step_seconds=summary["step"],
        timer_step_seconds=traced.seconds / traced.steps,
        untraced_step_seconds=plain.seconds / plain.steps,
        ops={k: summary[k] for k in xspace.OPS},
        gaps={k: summary[k] for k in xspace.GAPS},
        gpu=summary["gpu"],
        cost_seconds=cost,
        file_bytes=len(raw),
        slices=summary["slices"],
    )
    return found, gzip.compress(raw, mtime=0)


def read(raw: bytes, steps: int) -> dict | None:
    """The window's seconds per step from an XSpace's bytes: 'step' (first MARK to last), each of OPS and GAPS, and
    'slices': the window cut in SLICES equal times, each one's seconds by OPS and GAPS."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(raw)
    ops, host, marks, gpu = xspace.timeline(space)
    if len(marks) < 2 or steps <= 0:
        return None
    parts = xspace.split(ops, host, marks[0], marks[-1])
    n = min(SLICES, steps)
    edges = [marks[0] + (marks[-1] - marks[0]) * i // n for i in range(n + 1)]
    slices = tuple(xspace.split(ops, host, a, b) for a, b in pairwise(edges))
    per_step = {k: v / steps for k, v in parts.items()}
    return {"step": (marks[-1] - marks[0]) / 1e12 / steps, **per_step, "gpu": gpu, "slices": slices}


def trace_or_said(
    config, data, jit_compile: bool, run_execution
) -> tuple[TraceSummary | None, bytes | None, str | None]:
    """(summary, gzipped XSpace, None), or (None, None, why not): a failed measurement never fails the run, it is
    said."""
    try:
        return (*trace(config, data, jit_compile, run_execution), None)
    except Cancelled:
        raise
    except Exception as err:  # noqa: BLE001
        return None, None, str(err) if isinstance(err, TraceFailed) else f"{type(err).__name__}: {err}"
