"""Why a run takes the time it does: its steady epoch split into parts that are each measured, and what would help.

The regimes of Horace He's "Making Deep Learning Go Brrrr" (overhead, compute, memory), named only after they are
measured; ceilings measured, as the Empirical Roofline Toolkit does, not taken from a datasheet. The parts, in
seconds of the mean steady epoch (core.compare.steady_epoch_seconds, the speed measure's own epoch):

- fixed: steps x the step's fixed cost, from the line through two measured steps (step_line): the run's own, as its
  steady epochs timed it, and its step at another batch size, timed beside them (core.engine.profile): Python, op
  dispatch, kernel launches, the host-device sync; paid per step whatever its samples;
- compute: samples x the layers' products' seconds per sample at the model's shapes (core.engine.shapes), up to
  the step's whole per-sample cost (timed alone, the products include their own memory traffic);
- memory: the per-sample cost left after compute, up to what the step's bytes (core.engine.traffic) take at the
  measured bandwidth (core.engine.peak): the element-wise work that only moves data;
- other per-sample: what the per-sample cost has left after both (the loss, the optimizer, gathers, softmax);
  so compute, memory and other add up to samples x the step's per-sample cost, and with fixed, to the run's own step;
- epoch set-up: what each steady epoch's first call took beyond its steps at the other calls' pace, and the time
  after its last call (model.fit builds each epoch's data pipeline there), from the run's own calls;
- unexplained: the epoch less all of these, said as such: its steps away from the run's median step (the machine
  busier, or idler, for a while than during most of the run's calls).

A run is "X-bound" only where X is at least HALF of the epoch; advice comes from the same figures. No TensorFlow.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from core import compare
from core.i18n import N_, _
from core.roofline import measured, seconds, si

HALF = 0.5
HELPS = 1.15  # a larger batch "helps" from this gain in samples/s on
PARTS = ("fixed", "compute", "memory", "other", "setup")
BOUNDS = {"fixed": "overhead", "compute": "compute", "memory": "memory"}


@dataclass(frozen=True)
class Split:
    """A steady epoch's seconds by part (see the module docstring), with the figures they come from."""

    epoch: float  # the mean steady epoch, training seconds
    steps: int
    batch: int  # the global batch
    fixed: float
    compute: float | None
    memory: float | None
    other: float
    setup: float
    step_fixed: float  # seconds per step
    step_sample: float  # seconds per sample
    profile: tuple[tuple[int, float], ...]  # (batch, seconds per step) as timed in the set-up
    shape_gflops: float | None = None
    peak_gflops: float | None = None
    bandwidth_gbs: float | None = None
    bytes_per_epoch: float | None = None

    @property
    def explained(self) -> float:
        """The measured parts' sum over the measured epoch (1.0 = they add up exactly)."""
        return sum(self.parts().values()) / self.epoch

    @property
    def unexplained(self) -> float:
        """Epoch seconds the parts leave out; negative where they add up to more than the epoch."""
        return self.epoch - sum(self.parts().values())

    @property
    def bound(self) -> str | None:
        """'overhead', 'compute' or 'memory' where that part is at least HALF of the epoch, else None."""
        found = [BOUNDS[name] for name in BOUNDS if (getattr(self, name) or 0.0) >= HALF * self.epoch]
        return found[0] if found else None

    def parts(self) -> dict[str, float]:
        """The measured parts, in PARTS' order (a part not measured is left out)."""
        return {name: value for name in PARTS if (value := getattr(self, name)) is not None}

    def share(self, name: str) -> float:
        """A part as a fraction of the epoch."""
        return (getattr(self, name) or 0.0) / self.epoch


def _paces(epoch) -> list[float]:
    """Seconds per step of each of an epoch's calls after the first (which holds the epoch's set-up)."""
    calls = [c for c in epoch.calls if c.steps > 0 and c.call_seconds > 0]
    return [c.call_seconds / c.steps for c in calls[1:]]


def _pace(epoch) -> float | None:
    """An epoch's seconds per step at its steps' pace: the median of _paces; None for an epoch of one call."""
    paces = _paces(epoch)
    return statistics.median(paces) if paces else None


def step_pace(result) -> float | None:
    """The run's own seconds per step at its batch, as its steady epochs timed it: the median of their calls after each
    epoch's first (epochs of one call: their seconds per step, set-up in them, as epoch_setup then counts none)."""
    steady, steps = result.steady_epochs(), result.device.get("steps_per_epoch")
    paces = [p for e in steady for p in _paces(e)] or [e.train_seconds / steps for e in steady if steps]
    return statistics.median(paces) if paces else None


def epoch_setup(result) -> float:
    """Seconds per steady epoch outside its steps' pace: its first call's excess over the others' pace, and its tail."""
    found = []
    for e in result.steady_epochs():
        if (pace := _pace(e)) is None:
            continue
        calls = [c for c in e.calls if c.steps > 0 and c.call_seconds > 0]
        tail = max(0.0, e.train_seconds - sum(c.call_seconds for c in calls))
        found.append(max(0.0, calls[0].call_seconds - calls[0].steps * pace) + tail)
    return statistics.mean(found) if found else 0.0


def step_line(result) -> dict:
    """The device info's step_fixed_seconds and step_sample_seconds: the line through two measured steps, the run's own
    (step_pace, at its batch) and the other batch size's rounds (core.engine.profile, profile_batch / profile_seconds),
    with profile_batches and profile_step_seconds, the two points in batch order; {} before both are measured.

    Neither cost is let below zero, and the line always passes through the run's own point, the step the split divides:
    where the other point would put the fixed cost below zero (the step grows faster than its batch: caches, threads),
    the whole step is per-sample work; where it would make a larger batch's step cheaper, the whole step is fixed.
    """
    own, batch = step_pace(result), compare.global_batch(result)
    other, seconds = result.device.get("profile_batch"), measured(result.device.get("profile_seconds"))
    if own is None or not other or not seconds or other == batch:
        return {}
    # Each round against the epoch it went just before, whose steps met the same moment of the machine's load: the
    # median of those ratios, times the run's own step (a busy machine's pace can change several times in a run).
    pairs = [r / p for r, e in zip(result.device.get("profile_rounds") or (), result.steady_epochs(), strict=False)
             if r and (p := _pace(e))]  # fmt: skip
    seconds = own * statistics.median(pairs) if pairs else seconds
    (b1, t1), (b2, t2) = sorted(((batch, own), (int(other), seconds)))
    per_sample = min(max(0.0, (t2 - t1) / (b2 - b1)), own / batch)
    return {
        "step_fixed_seconds": own - batch * per_sample,
        "step_sample_seconds": per_sample,
        "profile_batches": [b1, b2],
        "profile_step_seconds": [t1, t2],
    }


def run_split(result) -> Split | None:
    """A RunResult's steady epoch split into its measured parts; None before epoch 2 or without the set-up's figures."""
    info, epoch = result.device, compare.steady_epoch_seconds(result)
    fixed, per_sample = measured(info.get("step_fixed_seconds")), info.get("step_sample_seconds")
    steps = info.get("steps_per_epoch")
    if not epoch or not steps or fixed is None and not measured(per_sample) or per_sample is None:
        return None
    fixed, batch = fixed or 0.0, compare.global_batch(result)
    samples = steps * batch
    compute_each, moved = measured(info.get("compute_sample_seconds")), measured(info.get("train_bytes_per_sample"))
    bandwidth = measured(info.get("bandwidth_gbs"))
    work = samples * float(per_sample)  # every per-sample second of the epoch, as the profile timed it
    compute = min(samples * compute_each, work) if compute_each else None
    memory = min(samples * moved / (bandwidth * 1e9), work - (compute or 0.0)) if moved and bandwidth else None
    other = work - (compute or 0.0) - (memory or 0.0)
    points = zip(info.get("profile_batches") or (), info.get("profile_step_seconds") or (), strict=False)
    return Split(
        epoch=epoch, steps=int(steps), batch=batch, fixed=steps * fixed, compute=compute, memory=memory, other=other,
        setup=epoch_setup(result), step_fixed=fixed, step_sample=float(per_sample),
        profile=tuple((int(b), float(t)) for b, t in points), shape_gflops=measured(info.get("shape_gflops")),
        peak_gflops=measured(info.get("peak_gflops")), bandwidth_gbs=bandwidth,
        bytes_per_epoch=samples * moved if moved else None,
    )  # fmt: skip


def batch_gain(s: Split) -> tuple[int, float, bool]:
    """(a larger batch, how many times the samples/s it gives, whether that was timed rather than predicted).

    Timed where the other batch size (core.engine.profile) is above the run's: its step's samples/s against the run's
    own. Else predicted from the fixed and per-sample costs at FACTOR (4) times the run's batch.
    """
    if len(s.profile) == 2 and s.profile[1][0] > s.batch:
        (b1, t1), (b2, t2) = s.profile
        return b2, (b2 / t2) / (b1 / t1), True
    larger = s.batch * 4

    def rate(batch: int) -> float:
        return batch / (s.step_fixed + batch * s.step_sample)

    return larger, rate(larger) / rate(s.batch), False


def _percent(s: Split, name: str) -> str:
    return f"{s.share(name):.0%}"


WORDS = {
    "fixed": N_("the fixed cost per step"),
    "compute": N_("the layers' products"),
    "memory": N_("memory traffic"),
    "other": N_("other per-sample work"),
    "setup": N_("the epoch's set-up"),
}


def bound_sentence(s: Split) -> str:
    """What the epoch is, in measured parts: 'overhead-bound: ...' only where that part is at least half of it."""
    # Whole sentences (core.i18n translates each): the figures go into their places.
    figures = {"epoch": seconds(s.epoch), "explained": s.explained, "kind": s.bound}
    if s.bound == "overhead":
        said = _("overhead-bound: a step costs {us:,.0f} µs whatever its samples; {steps:,} steps of it are {part} of "
                 "the {epoch} epoch; the parts explain {explained:.0%} of it.")  # fmt: skip
        return said.format(us=s.step_fixed * 1e6, steps=s.steps, part=seconds(s.fixed), **figures)
    if s.bound == "compute":
        rate = f"{s.shape_gflops:,.1f} GFLOP/s" if s.shape_gflops else _("the rate measured at these shapes")
        square = _(" (a large square matmul: {peak:,.0f})").format(peak=s.peak_gflops) if s.peak_gflops else ""
        said = _("compute-bound: the layers' products at {rate}{square} are {part} of the {epoch} epoch; the parts "
                 "explain {explained:.0%} of it.")  # fmt: skip
        return said.format(rate=rate, square=square, part=seconds(s.compute), **figures)
    if s.bound == "memory":
        said = _("memory-bound: moving {bytes} per epoch at {bandwidth:,.1f} GB/s is {part} of the {epoch} epoch; the "
                 "parts explain {explained:.0%} of it.")  # fmt: skip
        return said.format(bytes=si(s.bytes_per_epoch or 0, "B"), bandwidth=s.bandwidth_gbs, part=seconds(s.memory),
                           **figures)  # fmt: skip
    listed = ", ".join(f"{_(WORDS[n])} {_percent(s, n)}" for n in s.parts() if s.share(n) >= 0.005)
    said = _("No single bound: of the {epoch} epoch, {listed}; the parts explain {explained:.0%} of it.")
    return said.format(listed=listed, **figures)


def advice(s: Split) -> str:
    """What would help, from the same figures: a larger batch (timed or predicted), and whether a faster device would."""
    larger, gain, timed = batch_gain(s)
    how = _("timed beside the run's epochs") if timed else _("predicted from the fixed and per-sample costs")
    if gain >= HELPS:
        batch = _("A larger batch would help: ×{gain:.1f} samples per second at batch {larger:,} ({how}).")
    else:
        batch = _("A larger batch would not help much: ×{gain:.2f} samples per second at batch {larger:,} ({how}).")
    device = {
        "overhead": N_("A faster device would not help much: the fixed cost is paid per step, so fewer, larger steps "
                       "help (a larger batch, or many steps per call as the multi-step loop runs them)."),
        "compute": N_("A device that multiplies faster at these shapes helps."),
        "memory": N_("More memory bandwidth helps (a GPU has several times a CPU's)."),
    }.get(s.bound or "")  # fmt: skip
    return batch.format(gain=gain, larger=larger, how=how) + (" " + _(device) if device else "")
