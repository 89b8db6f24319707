"""Why a run's step takes the time it does, derived on read from what the engine measured (core.results.measurements).

Three kinds of figure, each said as what it is (the regimes of Horace He's "Making Deep Learning Go Brrrr", named
only after they are measured):

- The trace: TensorFlow's profiler over a window of a throwaway copy of the step (core.engine.trace). Its ops by
  category and the gaps between them partition the trace's own step; that step is held against the run's own
  timer (step_pace), an independent clock on other steps, as the check of the reading.
- The line: a model, seconds per step = fixed + batch x per sample, through two timed points (the run's own step and
  the step at another batch size). It is tested by predicting a third batch size it was not fitted on (timed in the
  same rounds); where it misses by more than a quarter, it is said not to hold and gives no advice. A line through
  each round alone gives the rounds' spread of its advice: where they put a larger batch's gain either side of HELPS,
  the page says so rather than take a side.
- The floors: the layers' products timed alone at the model's shapes, the step's bytes at the measured bandwidth and
  its FLOPs at the square matmul's peak, each measured alone: the least a step could take, not slices of it.

A run is "X-bound" only where the trace says X is at least HALF of the step, and where the window is cut in slices
(core.engine.trace.SLICES), only where the 90% bootstrap interval of X's share over them stays at HALF or above: a
share near half that the slices put on either side is "no single bound". No TensorFlow here.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from core.analysis import compare
from core.analysis.roofline import positive
from core.language.i18n import N_
from core.results.measurements import GAPS, OPS

HALF = 0.5
HELPS = 1.15  # a larger batch "helps" from this gain in samples/s on
HOLDS = (0.75, 1 / 0.75)  # the timed third step over the line's prediction, where the line holds
FACTOR = 4  # a larger batch the line predicts, where none larger was timed
MIN_SLICES = 3  # fewer slices of the window than these give no interval: the share alone decides


def _paces(epoch) -> list[float]:
    """Seconds per step of each of an epoch's calls after the first (which holds the epoch's set-up)."""
    calls = [c for c in epoch.calls if c.steps > 0 and c.call_seconds > 0]
    return [c.call_seconds / c.steps for c in calls[1:]]


def step_pace(result) -> float | None:
    """The run's own seconds per step, as its steady epochs timed it: the median of their calls after each epoch's
    first (epochs of one call: their seconds per step)."""
    steady, steps = result.steady_epochs(), result.device.get("steps_per_epoch")
    paces = [p for e in steady for p in _paces(e)] or [e.train_seconds / steps for e in steady if steps]
    return statistics.median(paces) if paces else None


def _round_ratios(result, timing) -> list[float]:
    """Each round's step over the epoch it went just before (the same moment of the machine's load)."""
    return [
        r / statistics.median(p)
        for r, e in zip(timing.rounds, result.steady_epochs(), strict=False)
        if r and (p := _paces(e))
    ]


def _timed(result, timing) -> float | None:
    """A throwaway step's seconds at its batch, against the run's own: the median of its rounds' ratios to their
    epochs times the run's step."""
    own, pairs = step_pace(result), _round_ratios(result, timing)
    return own * statistics.median(pairs) if own and pairs else positive(timing.seconds)


@dataclass(frozen=True)
class Line:
    """A model: seconds per step = fixed + batch x per_sample, through the run's own step and one other batch's."""

    fixed: float
    per_sample: float
    points: tuple[tuple[int, float], tuple[int, float]]  # (batch, seconds per step), in batch order

    def step(self, batch: int) -> float:
        """The line's seconds per step at `batch`."""
        return self.fixed + batch * self.per_sample


@dataclass(frozen=True)
class Prediction:
    """The line's step at a batch size it was not fitted on, against that step as timed."""

    batch: int
    predicted: float
    timed: float

    @property
    def ratio(self) -> float:
        """Timed over predicted: 1.0 = the line predicted it exactly."""
        return self.timed / self.predicted

    @property
    def holds(self) -> bool:
        """Whether the line predicted the step within HOLDS (a quarter either way)."""
        return HOLDS[0] <= self.ratio <= HOLDS[1] and self.predicted > 0


def _through(a: tuple[int, float], b: tuple[int, float]) -> Line:
    (b1, t1), (b2, t2) = sorted((a, b))
    per_sample = (t2 - t1) / (b2 - b1)
    return Line(t1 - b1 * per_sample, per_sample, ((b1, t1), (b2, t2)))


def _fit(result):
    """The rounds' other batch size as timed, with the run's own step and batch; None before both are timed."""
    fit = result.measured.fit if result.measured else None
    own, batch = step_pace(result), compare.global_batch(result)
    return (fit, own, batch) if fit and own and fit.batch != batch else None


def line(result) -> Line | None:
    """The line through the run's own step and the rounds' other batch size; None before both are timed."""
    found = _fit(result)
    other = _timed(result, found[0]) if found else None
    return _through((found[2], found[1]), (found[0].batch, other)) if found and other else None


def round_lines(result) -> tuple[Line, ...]:
    """One line a round: the run's step and that round's, held against its epoch; their spread is the rounds'."""
    if (found := _fit(result)) is None:
        return ()
    fit, own, batch = found
    ratios = _round_ratios(result, fit) or [r / own for r in fit.rounds if r]  # epochs of one call: _timed's fallback
    return tuple(_through((batch, own), (fit.batch, own * q)) for q in ratios)


def prediction(result, fitted: Line | None) -> Prediction | None:
    """The line's prediction of the third batch size the rounds timed, against that timing; None where not timed."""
    check = result.measured.check if result.measured else None
    timed = _timed(result, check) if check and fitted else None
    return Prediction(check.batch, fitted.step(check.batch), timed) if timed else None


@dataclass(frozen=True)
class Floors:
    """The least a step could take at each limit, each measured alone (seconds per step; None where not measured)."""

    products: float | None  # the layers' products at the model's shapes (core.engine.shapes)
    products_gflops: float | None
    peak: float | None  # the step's FLOPs at the square matmul's peak
    peak_gflops: float | None
    memory: float | None  # the step's bytes at the measured bandwidth
    bandwidth_gbs: float | None
    bytes_per_step: float | None


def floors(result) -> Floors:
    """The run's floors per step, from its counted FLOPs and bytes and its measured rates."""
    measured, info, batch = result.measured, result.device, compare.global_batch(result)
    limits = measured.limits if measured else None
    shapes = measured.shapes if measured else None
    flops, moved = positive(info.get("train_flops_per_sample")), positive(info.get("train_bytes_per_sample"))
    peak, bandwidth = (positive(getattr(limits, k, None)) for k in ("peak_gflops", "bandwidth_gbs"))
    sample = positive(getattr(shapes, "sample_seconds", None))
    return Floors(
        products=sample * batch if sample else None,
        products_gflops=positive(getattr(shapes, "gflops", None)),
        peak=flops * batch / (peak * 1e9) if flops and peak else None,
        peak_gflops=peak,
        memory=moved * batch / (bandwidth * 1e9) if moved and bandwidth else None,
        bandwidth_gbs=bandwidth,
        bytes_per_step=moved * batch if moved else None,
    )


@dataclass(frozen=True)
class Why:
    """A run's why: its trace, its own timer, the line and its test, and the floors."""

    batch: int
    timer: float | None  # the run's own seconds per step (step_pace)
    trace: object | None  # core.results.measurements.TraceSummary
    line: Line | None
    prediction: Prediction | None
    floors: Floors
    round_lines: tuple[Line, ...] = ()  # the line through each round alone (round_lines)

    def shares(self) -> dict[str, float]:
        """The trace's step by BOUNDS: the gaps between ops, the products, every other op (they move data)."""
        t = self.trace
        if t is None or t.step_seconds <= 0:
            return {}
        return _by_bound(t.ops, t.gaps, t.step_seconds)

    def slice_shares(self) -> list[dict[str, float]]:
        """Each slice of the traced window (equal times) by BOUNDS; none for a trace recorded without slices."""
        slices = getattr(self.trace, "slices", ()) or ()
        found = []
        for piece in slices:
            total = sum(piece.values())
            if total > 0:
                found.append(
                    _by_bound({k: piece.get(k, 0.0) for k in OPS}, {k: piece.get(k, 0.0) for k in GAPS}, total)
                )
        return found

    def share_interval(self, name: str) -> tuple[float, float] | None:
        """The 90% percentile-bootstrap interval (core.analysis.compare's, seeded) of the mean of `name`'s share over
        the window's slices; None under MIN_SLICES. Slices are equal times, so their mean is the window's share."""
        import numpy as np

        shares = [s[name] for s in self.slice_shares()]
        return compare.bootstrap_interval(shares, np.mean) if len(shares) >= MIN_SLICES else None

    @property
    def leading(self) -> str | None:
        """The part that takes at least HALF of the traced step, whether or not its slices bear that out."""
        found = [name for name, share in self.shares().items() if share >= HALF]
        return found[0] if found else None

    @property
    def bound(self) -> str | None:
        """'overhead', 'compute' or 'memory' where the trace puts at least HALF of the step there and, where it has
        slices, the interval of that share over them stays at HALF or above; else None."""
        name = self.leading
        interval = self.share_interval(name) if name else None
        return name if name and (interval is None or interval[0] >= HALF) else None

    @property
    def trace_vs_timer(self) -> float | None:
        """The trace's step over the run's own timed step: the independent check of the trace's reading."""
        return self.trace.step_seconds / self.timer if self.trace and self.timer else None


def _by_bound(ops: dict[str, float], gaps: dict[str, float], total: float) -> dict[str, float]:
    """Seconds by OPS and GAPS as shares of `total` by BOUNDS: the gaps, the products, the other ops."""
    matmul = ops.get("matmul", 0.0)
    return {
        "overhead": sum(gaps.values()) / total,
        "compute": matmul / total,
        "memory": (sum(ops.values()) - matmul) / total,
    }


def explain(result) -> Why | None:
    """A RunResult's why; None before a steady epoch or where the run measured none of it."""
    if result.measured is None or not result.steady_epochs():
        return None
    fitted = line(result)
    trace = result.measured.trace
    batch, pace = compare.global_batch(result), step_pace(result)
    why = Why(batch, pace, trace, fitted, prediction(result, fitted), floors(result), round_lines(result))
    return why if why.trace or why.line else None


def duration(seconds: float) -> str:
    """186e-6 -> '186 µs', 1.43e-3 -> '1.4 ms', 0.012 -> '12 ms'."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.0f} µs" if seconds >= 1e-5 else f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.1f} ms" if seconds < 0.01 else f"{seconds * 1e3:,.0f} ms"


OPS_WORDS = {
    "matmul": N_("matmul/conv"),
    "elementwise": N_("element-wise"),
    "loss": N_("the loss"),
    "optimizer": N_("the optimizer's update"),
    "input": N_("input and copies"),
}
GAPS_WORDS = {
    "python": N_("Python"),
    "dispatch": N_("dispatch"),
    "runtime": N_("the runtime between ops"),
    "launch": N_("launches"),
    "sync": N_("sync"),
}
