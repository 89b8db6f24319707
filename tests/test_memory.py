"""The memory estimate before a run: layer shapes worked by hand and checked against the real Keras models."""

import math

import pytest

from core.engine import memory, models
from core.engine.tf_setup import tf
from core.history.store import Store, attach
from core.settings.config import ConfigError, SweepConfig, TrainConfig


@pytest.mark.parametrize(("name", "hidden"), [("softmax", 128), ("mlp", 128), ("mlp", 7), ("cnn", 128)])
def test_layer_shapes_and_parameters_match_the_real_keras_model(name, hidden):
    with tf().device("/CPU:0"):
        model = models.build(name, hidden)
    shape = tuple(model.inputs[0].shape)
    real = []
    for layer in model.layers:
        shape = tuple(layer.compute_output_shape(shape))
        real.append((type(layer).__name__, shape[1:], layer.count_params()))
    assert [(la.layer_type, la.output, la.parameters) for la in memory.layers(name, hidden)] == real


def test_the_cnn_estimate_worked_by_hand():
    # Per sample: reshape 784, conv 26x26x32 = 21,632, pool 13x13x32 = 5,408, conv 11x11x64 = 7,744,
    # pool 5x5x64 = 1,600, flatten 1,600, dense 10: 38,778 floats. Parameters: 320 + 18,496 + 16,010.
    config = TrainConfig(dataset="synthetic", model="cnn", batch_size=4096, train_subset=8192, optimizer="adam")
    est = memory.estimate(config)
    assert est.activations == int(4096 * 38_778 * 4 * memory.ACTIVATION_FACTOR)
    assert est.parameters == 34_826 * 4 * (2 + 2)  # weights, gradients, Adam's two slots
    assert est.data == est.host == (8192 + 10_000) * (784 * 4 + 4)
    assert est.total == est.data * 2 + est.parameters + est.activations  # on the CPU the host copy counts too


def test_a_sweep_is_sized_at_its_largest_batch():
    small = memory.estimate(SweepConfig(model="mlp", batch_sizes=(32, 64)))
    large = memory.estimate(SweepConfig(model="mlp", batch_sizes=(32, 8192)))
    assert large.activations == small.activations * 8192 // 64 and large.data == small.data


@pytest.fixture
def one_gib_free(tmp_path, monkeypatch):
    """A /proc/meminfo that says 1 GiB is available (the real file's format)."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       25165824 kB\nMemFree:         1000000 kB\nMemAvailable:    1048576 kB\n")
    monkeypatch.setattr(memory, "MEMINFO", meminfo)
    return meminfo


def test_a_run_that_does_not_fit_is_refused_with_the_estimate_and_the_free_memory(one_gib_free):
    assert memory.available_ram() == 2**30
    memory.check(TrainConfig(dataset="synthetic", model="cnn", batch_size=256, train_subset=2000))  # fits
    big = TrainConfig(dataset="synthetic", model="cnn", batch_size=8192, train_subset=8192)
    with pytest.raises(ConfigError) as refused:
        memory.check(big)
    need = memory.estimate(big).total / 2**30
    assert refused.value.field == "batch_size"
    assert str(refused.value) == (
        f"This run would need about {need:.1f} GiB of memory on the CPU at its peak "
        f"({memory.estimate(big).activations / 2**30:.1f} GiB of it for batch size 8,192 with model cnn), "
        "but only 1.0 GiB is free; try a smaller batch size, model or training subset."
    )


def test_the_runner_refuses_it_before_it_is_queued_or_stored(one_gib_free, tmp_path, shared_runner):
    runner, store = shared_runner, Store(tmp_path / "runs.sqlite3")
    attach(runner, store)
    events = []
    runner.add_listener(lambda event, job, payload: events.append(event))
    with pytest.raises(ConfigError, match="only 1.0 GiB is free"):
        runner.submit(TrainConfig(dataset="synthetic", model="cnn", batch_size=8192, train_subset=8192))
    assert runner.jobs() == [] and events == [] and store.history() == []


def test_the_largest_setting_is_refused_on_this_machine_unless_it_really_fits():
    biggest = TrainConfig(dataset="synthetic", model="cnn", batch_size=65_536, train_subset=1_000_000)
    need, free = memory.estimate(biggest).total, memory.available_ram()
    assert need > 20 * 2**30  # the issue saw it OOM-killed above 14 GiB
    if free is None or need <= free:
        pytest.skip(f"this machine has {free} bytes free, enough for {need}")
    with pytest.raises(ConfigError, match=r"would need about \d+\.\d GiB"):
        memory.check(biggest)


def test_a_device_whose_memory_cannot_be_read_refuses_nothing():
    assert memory.available("node-1/gpu") is None and memory.available("gpu:all") is None
    assert math.isfinite(memory.available("cpu") or 0.0)
