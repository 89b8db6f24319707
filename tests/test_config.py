"""TrainConfig: every bad field is rejected with its name and the allowed range."""

import math

import pytest

from core.settings.config import ConfigError, SweepConfig, TrainConfig, normalize_device


def test_defaults_are_the_tutorial():
    c = TrainConfig()
    assert (c.dataset, c.model, c.optimizer, c.learning_rate, c.batch_size, c.epochs) == (
        "fashion_mnist",
        "softmax",
        "sgd",
        0.1,
        100,
        10,
    )
    assert c.steps_per_epoch == 600


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("dataset", "cifar10", "mnist, fashion_mnist, synthetic"),
        ("model", "resnet", "softmax, mlp, cnn"),
        ("device", "tpu", "cpu, gpu, gpu:N, cpu:N, gpu:all or cpu:all, optionally after NODE/"),
        ("device", "gpu:-1", "cpu, gpu"),
        ("device", 3, "cpu, gpu"),
        ("epochs", 0, "from 1 to 1000"),
        ("epochs", 1001, "from 1 to 1000"),
        ("epochs", 2.5, "whole number"),
        ("epochs", "3", "whole number"),
        ("batch_size", 0, "from 1 to"),
        ("batch_size", 60_001, "the training set has 60,000 samples"),
        ("batch_size", True, "whole number"),
        ("learning_rate", 0, "above 0"),
        ("learning_rate", -0.1, "above 0"),
        ("learning_rate", 10.5, "at most 10"),
        ("learning_rate", math.nan, "finite"),
        ("learning_rate", math.inf, "finite"),
        ("learning_rate", "0.1", "finite number"),
        ("optimizer", "rmsprop", "sgd, adam"),
        ("seed", -1, "from 0"),
        ("execution", "eager", "keras-fit, keras-fit-spe, multi-step-loop"),
        ("train_subset", 5, "from 10 to 60000"),
        ("train_subset", 60_001, "from 10 to 60000"),
        ("hidden_units", 0, "from 1"),
    ],
)
def test_bad_field_is_named(field, value, says):
    with pytest.raises(ConfigError) as info:
        TrainConfig(**{field: value})
    message = str(info.value)
    assert info.value.field == field
    assert field in message and says in message
    assert "\n" not in message


def test_batch_size_is_checked_against_the_subset():
    with pytest.raises(ConfigError, match="training set has 500 samples"):
        TrainConfig(train_subset=500, batch_size=501)
    assert TrainConfig(train_subset=500, batch_size=500).steps_per_epoch == 1


def test_synthetic_can_be_larger_than_the_real_datasets():
    c = TrainConfig(dataset="synthetic", train_subset=200_000, batch_size=65_536)
    assert c.train_size == 200_000


def test_values_are_normalised_and_frozen():
    c = TrainConfig(device=" GPU:1 ", epochs=3.0, learning_rate=1)
    assert (c.device, c.epochs, c.learning_rate) == ("gpu:1", 3, 1.0)
    assert isinstance(c.learning_rate, float)
    with pytest.raises(AttributeError):
        c.epochs = 5  # type: ignore[misc]


def test_round_trip_and_unknown_fields():
    c = TrainConfig(dataset="synthetic", model="mlp", train_subset=1000, batch_size=50, seed=7)
    assert TrainConfig.from_dict(c.to_dict()) == c
    with pytest.raises(ConfigError, match="unknown field 'colour'"):
        TrainConfig.from_dict({**c.to_dict(), "colour": "red"})
    with pytest.raises(ConfigError, match="config must be an object"):
        TrainConfig.from_dict([1, 2])


@pytest.mark.parametrize(("text", "name"), [("cpu", "cpu"), ("GPU", "gpu"), ("gpu:0", "gpu:0"), ("cpu:01", "cpu:1")])
def test_device_names(text, name):
    assert normalize_device(text) == name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("GPU-Box/GPU:0", "gpu-box/gpu:0"),
        ("10.0.0.5/cpu", "10.0.0.5/cpu"),
        ("gpu:ALL", "gpu:all"),
        ("n1/cpu:all", "n1/cpu:all"),
    ],
)
def test_device_names_on_ray_nodes_and_all_devices(text, name):
    assert normalize_device(text) == name
    config = TrainConfig(device=text, execution="keras-fit")
    assert config.device == name and config.node == (name.split("/")[0] if "/" in name else None)


@pytest.mark.parametrize("text", ["/cpu", "a/b/cpu", "box/tpu", "box/gpu:x", "-box/cpu"])
def test_bad_node_devices_are_named(text):
    with pytest.raises(ConfigError, match="device must be .* optionally after NODE/"):
        TrainConfig(device=text)


def test_all_devices_need_model_fit_and_a_sweep_stays_on_one_machine():
    with pytest.raises(ConfigError, match="execution must be keras-fit or keras-fit-spe for device cpu:all"):
        TrainConfig(device="cpu:all")
    with pytest.raises(ConfigError, match="devices must all be on one machine"):
        SweepConfig(devices="cpu,box/gpu")
    assert SweepConfig(devices="box/cpu,box/gpu").node == "box"
    with pytest.raises(ConfigError, match="devices must each be one device"):
        SweepConfig(devices="gpu:all")
