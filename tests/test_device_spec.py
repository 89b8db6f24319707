"""One device-name parser (core.machine.device_spec): what a user types, what the app stores, TensorFlow's names."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.machine.device_spec import DeviceSpec, device_name, parse_device_name
from core.settings.config import ConfigError, parse_device


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("cpu", DeviceSpec(None, "cpu")),
        (" GPU ", DeviceSpec(None, "gpu")),
        ("gpu:1", DeviceSpec(None, "gpu", 1)),
        ("Box/GPU:ALL", DeviceSpec("box", "gpu", "all")),
        ("node-b.lan/cpu:0", DeviceSpec("node-b.lan", "cpu", 0)),
    ],
)
def test_each_form_parses_into_its_parts(text, spec):
    assert parse_device_name(text) == spec == device_name(text)


def test_tensorflows_name_parses_inside_but_a_person_typing_a_slash_names_no_node():
    assert device_name("/GPU:0") == DeviceSpec(None, "gpu", 0)
    assert parse_device_name("/gpu") is None
    with pytest.raises(ConfigError, match="device must be"):
        parse_device("/cpu")


@pytest.mark.parametrize("text", ["", "tpu", "gpu:", "gpu:1000", "a/b/gpu", "/job:localhost/device:GPU:0", "gpu:-1"])
def test_anything_else_is_no_device_and_says_so(text):
    assert parse_device_name(text) is None
    with pytest.raises(ValueError, match="not a device name"):
        device_name(text)
    with pytest.raises(ConfigError, match="device must be"):
        parse_device(text)


def test_a_non_string_is_no_device():
    assert parse_device_name(None) is None and parse_device_name(0) is None


nodes = st.none() | st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)
indices = st.none() | st.just("all") | st.integers(0, 999)


@given(node=nodes, device_type=st.sampled_from(["cpu", "gpu"]), index=indices)
def test_a_name_reads_back_as_the_parts_it_was_written_from(node, device_type, index):
    spec = DeviceSpec(node, device_type, index)
    assert device_name(str(spec)) == spec
    assert device_name(spec.local) == DeviceSpec(None, device_type, index)
    assert spec.tf_name == f"/{device_type.upper()}:{index if isinstance(index, int) else 0}"
    assert device_name(spec.tf_name).number == spec.number
