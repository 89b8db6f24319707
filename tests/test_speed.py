"""The one speed measure (core.analysis.compare): steady samples per second, its interval, and every sentence made from
it.

Hand-made runs where the naive wording would be wrong: batch sizes that differ (a step holds 10x the samples),
a mode with per-epoch set-up outside its calls (model.fit), runs on one device, a file without calls.
"""

from __future__ import annotations

import pytest

from core.analysis import compare
from core.cli.compare import ratio_lines
from core.results import CallPoint, EpochMetrics, RunResult, SweepPoint, steady_epoch_seconds


def run(
    batch: int,
    steps: int,
    call_steps: list[float],
    setup: float = 0.0,
    epochs: int = 4,
    tail: float = 0.0,
    subset: int | None = None,
) -> RunResult:
    """A run of `epochs` epochs: each epoch `steps` steps at `batch`, in calls of the seconds per step given
    (cycled), the first call carrying `setup` seconds, and `tail` seconds after the last call."""
    out, elapsed, done = [], 0.0, 0
    per_call = max(1, steps // len(call_steps))
    for k in range(1, epochs + 1):
        calls, left, i = [], steps, 0
        for i, step in enumerate(call_steps):
            n = left if i == len(call_steps) - 1 else min(per_call, left)
            seconds = n * step + (setup if i == 0 else 0.0)
            elapsed, done, left = elapsed + seconds, done + n * batch, left - n
            calls.append(CallPoint(elapsed, done, n, seconds, 0.5, 0.8))
        train = sum(c.call_seconds for c in calls) + tail
        elapsed += tail
        samples = steps * batch
        out.append(EpochMetrics(k, 0.5, 0.8, 0.5, 0.8, train, 0.1, samples / train, k == 1, calls=calls))
    config = {"batch_size": batch, "train_subset": subset, "device": "cpu", "epochs": epochs}
    return RunResult(config=config, host={}, device={"global_batch_size": batch}, status="completed", epochs=out)


def test_a_larger_batch_that_trains_more_samples_a_second_is_faster_though_its_steps_are_longer():
    # The case: batch 1000's step takes 7.7x batch 100's, but holds 10x the samples.
    small = run(100, 600, [0.30e-3, 0.31e-3, 0.29e-3, 0.30e-3])
    large = run(1000, 60, [2.3e-3, 2.4e-3, 2.2e-3, 2.3e-3])
    found = compare.speedup(small, large)
    rates = compare.throughput(small), compare.throughput(large)
    assert found.ratio == pytest.approx(rates[1] / rates[0]) and found.ratio == pytest.approx(0.30 / 0.23, rel=0.01)
    assert found.low <= found.ratio <= found.high and found.unit == "call" and found.count == 24
    sentence = compare.speedup_sentence(small, large, "batch 100", "batch 1000")
    assert sentence.startswith("batch 1000 is 1.3× faster than batch 100 (") and "samples per second" in sentence
    assert compare.slower_first([small, large]) == (0, 1) and compare.slower_first([large, small]) == (1, 0)
    # The CLI's and the page's ratio table: samples/s and a ratio above 1 for batch 1000.
    lines = ratio_lines([small, large], ["batch 100", "batch 1000"])
    assert lines[1].split()[2:4] == [f"{rates[0]:,.0f}", "1.00x"]
    assert lines[2].split()[2:4] == [f"{rates[1]:,.0f}", f"{found.ratio:.2f}x"]


def test_model_fit_per_epoch_set_up_counts_so_the_headline_is_the_ratio_of_steady_epochs():
    # plain fit: 20 ms of set-up in each epoch's first call and 5 ms after its last; the loop: neither.
    fit = run(100, 300, [1.0e-3] * 6, setup=0.020, tail=0.005)
    loop = run(100, 300, [0.2e-3] * 6)
    found = compare.speedup(fit, loop)
    epochs = steady_epoch_seconds(fit) / steady_epoch_seconds(loop)
    assert found.ratio == pytest.approx(epochs)  # the same samples per epoch: exactly the epochs' ratio
    assert found.ratio == pytest.approx((0.300 + 0.025) / 0.060)  # not the 5.0x of the step times alone
    # The calls add up to the epochs: the measure is the seconds the chart shows.
    calls = compare.steady_calls(fit)
    assert sum(calls.seconds) == pytest.approx(sum(e.train_seconds for e in fit.steady_epochs()))


def test_the_steady_epoch_is_the_mean_of_epochs_2_on_so_its_ratio_is_the_headlines_where_a_medians_is_not():
    # One stalled steady epoch of three: the median would ignore it, the throughput (the headline) does not.
    loop = run(100, 300, [1e-3] * 3)
    fit = run(100, 300, [3e-3] * 3)
    fit.epochs[2] = EpochMetrics(**{**fit.epochs[2].__dict__, "train_seconds": fit.epochs[2].train_seconds * 3})
    steady = [e.train_seconds for e in fit.epochs[1:]]
    assert steady_epoch_seconds(fit) == pytest.approx(sum(steady) / 3)
    ratio = steady_epoch_seconds(fit) / steady_epoch_seconds(loop)
    assert ratio == pytest.approx(compare.throughput(loop) / compare.throughput(fit))
    assert ratio != pytest.approx(sorted(steady)[1] / steady_epoch_seconds(loop), rel=0.1)
    assert compare.warmup_cost(fit) == pytest.approx(fit.epochs[0].train_seconds - sum(steady) / 3)
    assert steady_epoch_seconds(run(100, 300, [1e-3], epochs=1)) is None


def test_a_stall_counts_for_the_seconds_it_took_and_widens_the_interval():
    steady = run(100, 400, [1e-3] * 8)
    stalled = run(100, 400, [1e-3] * 7 + [5e-3])
    assert compare.speedup(steady, steady).low == pytest.approx(1.0)
    found = compare.speedup(stalled, steady)
    assert found.ratio == pytest.approx((350 + 250) / 400 * 1e-3 / 1e-3, rel=1e-6)  # 600 ms against 400 ms
    assert found.low < found.ratio < found.high and compare.speedup(stalled, steady) == found  # seeded


def test_without_calls_the_epochs_are_the_measurements_and_one_steady_epoch_has_no_interval():
    slow, fast = run(100, 300, [3e-3]), run(100, 300, [1e-3])
    for r in (slow, fast):
        r.epochs = [EpochMetrics(**{**e.__dict__, "calls": []}) for e in r.epochs]
    found = compare.speedup(slow, fast)
    assert found.ratio == pytest.approx(3.0) and found.unit == "epoch" and found.count == 6
    assert "over 6 steady epochs after epoch 1" in compare.speedup_sentence(slow, fast, "CPU", "GPU")
    one, other = run(100, 300, [3e-3], epochs=2), run(100, 300, [1e-3], epochs=2)
    for r in (one, other):
        r.epochs = [EpochMetrics(**{**e.__dict__, "calls": []}) for e in r.epochs]
    assert compare.speedup(one, other).low is None
    assert "(no interval: a side has one measurement;" in compare.speedup_sentence(one, other, "CPU", "GPU")


def test_before_epoch_2_the_sentence_says_what_is_missing_without_naming_devices():
    first = run(100, 300, [1e-3], epochs=1)
    sentence = compare.speedup_sentence(first, run(100, 300, [1e-3]), "CPU (plain fit)", "CPU (multi-step loop)")
    assert sentence == compare.NEEDS and "device" not in sentence
    assert compare.slower_first([first, first]) is None and compare.ratio_words(None) == "-"


def test_a_subset_and_replicas_compare_by_samples():
    # Half the training set per epoch, twice the replicas: the same samples per second is the same speed.
    whole = run(100, 600, [1e-3] * 4)
    half = run(200, 150, [2e-3] * 4, subset=30_000)
    assert compare.speedup(whole, half).ratio == pytest.approx(1.0)


def test_a_sweep_point_is_measured_the_same_way_from_its_repeats():
    point = SweepPoint("cpu", 100, 50, 1000.0, 800.0, 1250.0, (800.0, 1000.0, 1250.0))
    found = compare.point_measurements(point)
    assert found.rate == pytest.approx(3 / (1 / 800 + 1 / 1000 + 1 / 1250))  # all samples over all seconds
    assert compare.point_measurements(SweepPoint("cpu", 100, 50, None, None, None, error="x")) is None
