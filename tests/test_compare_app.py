"""The Train view's "Compare along" through Streamlit's AppTest: an axis and its values, Run, one series per value."""

from __future__ import annotations

import uuid

import pytest

from core.machine import hardware_check
from core.settings import device_modes
from core.settings.axes import Comparison
from core.settings.config import ConfigError
from tests.test_app import chart_specs, encoding, page, settle
from ui.resources import get_runner

TINY = {
    "dataset": "synthetic",
    "model": "mlp",
    "hidden_units": 32,
    "train_subset": 600,
    "batch_size": 30,
    "epochs": 2,
    "mode": "cpu",
}


@pytest.fixture()
def at():
    at = page("Train")
    for key, value in TINY.items():
        at.session_state[key] = value
    return at.run()


def test_a_precision_comparison_runs_one_series_per_value_and_the_sentence_names_the_axis(at):
    at.selectbox(key="axis").set_value("precision").run()
    assert at.multiselect(key="axis_choices").value == ["float32", "mixed_bfloat16"]  # its starting pair
    at.button(key="run").click().run()
    train = settle(at)
    assert not at.exception and not train.error
    results = [get_runner().status(i).result for i in at.session_state["train"].ids]
    assert [r.config["precision"] for r in results] == ["float32", "mixed_bfloat16"]
    assert [r.device["compute_dtype"] for r in results] == ["float32", "bfloat16"]
    # Every other setting is shared: the configs differ in precision only.
    assert len({str({k: v for k, v in r.config.items() if k != "precision"}) for r in results}) == 1
    (race_spec, _), (time_spec, _), *_ = chart_specs(train)
    assert encoding(race_spec)["color"]["scale"]["domain"] == ["CPU (float32)", "CPU (mixed_bfloat16)"]
    assert encoding(time_spec)["color"]["scale"]["domain"] == ["CPU (float32)", "CPU (mixed_bfloat16)"]
    (headline,) = [m.value for m in train.markdown if m.value.startswith("#### ")]
    # The faster value first, the axis' values named, where they ran said once: "X is N× faster than Y on CPU".
    words = headline.replace("\\_", "_")
    assert {"float32", "mixed_bfloat16"} <= set(words.replace(" ", "|").split("|")) and " on CPU (" in words, words
    assert "faster than" in words and "CPU (float32)" not in words
    # The numbers say the XLA each run used, as recorded, and that auto chose it: on for the multi-step loop of a
    # dense model on a CPU.
    (table,) = [m.value for m in train.markdown if m.value.startswith("| | ")]
    (xla,) = [row for row in table.splitlines() if row.startswith("| XLA (`jit_compile`) |")]
    assert [c.strip() for c in xla.strip("|").split("|")][1:] == ["on (auto)", "on (auto)"]


@pytest.mark.parametrize(
    ("axis", "values", "says"),
    [
        ("precision", ["float32"], "values must list 2 to 4 precision values, not 1."),
        ("batch_size", "10, 20, 30, 40, 50", "values must list 2 to 4 batch_size values, not 5."),
        ("batch_size", "30, 0", "batch_size must be from 1 to 600"),
        ("xla", ["on", "on"], "values lists xla on twice"),
    ],
)
def test_bad_values_are_one_sentence_and_nothing_is_queued(at, axis, values, says):
    before = len(get_runner().jobs())
    at.selectbox(key="axis").set_value(axis).run()
    at.session_state["axis_numbers" if isinstance(values, str) else "axis_choices"] = values
    at.run()
    (error,) = [e.value for e in at.error]
    assert says in error and "\n" not in error
    assert at.button(key="run").disabled
    assert len(get_runner().jobs()) == before


def test_a_dtype_the_gpu_cannot_run_is_refused_before_anything_is_queued():
    # A V100 (compute capability 7.0) has no bfloat16: one sentence from the plan, no run.
    host = {"cuda_build": "12.5", "gpus": [{"index": 0, "name": "Tesla V100", "compute_capability": "7.0"}]}
    hw = hardware_check.Hardware(hardware_check.READY, host=host)
    settings = {k: v for k, v in TINY.items() if k != "mode"}
    with pytest.raises(ConfigError, match="precision mixed_bfloat16 cannot run on GPU:0: .* 8.0 or later"):
        device_modes.plan(settings, "gpu:0", hw, Comparison("precision", ("float32", "mixed_bfloat16")))


def test_a_stored_comparison_overlays_again_with_one_pick():
    from core.history.store import get_store
    from tests.sample_runs import make_result

    group = f"cmp{uuid.uuid4().hex[:8]}"
    ids = [f"{group}-1", f"{group}-2"]
    for i, run_id in enumerate(ids):
        get_store().finish(make_result(run_id=run_id, seed=i))
    at = page("History")
    # Each group once, its label ending in the group's id.
    assert [o for o in at.selectbox(key="history_group").options if o.endswith(group)] != []
    at.selectbox(key="history_group").set_value(group).run()
    assert at.session_state["history_pick"] == ids
    assert not at.exception


def test_float16_on_the_cpu_is_allowed_and_said_to_be_slow(at):
    at.session_state["precision"] = "mixed_float16"
    at.run()
    assert not at.error and not at.button(key="run").disabled  # slower is a result, not an error
    assert any(c.value.startswith("mixed_float16 on CPU: most CPUs have no float16") for c in at.caption)
