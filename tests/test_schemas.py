"""The file schemas: valid JSON Schema, every field says what it allows, and refusals name the field's path."""

import pytest
from jsonschema import Draft202012Validator

from core.history.checks import check_schema, path_text
from core.history.limits import RunFileError
from core.history.schemas import SCHEMAS

ALL = [(kind, version, schema) for kind, versions in SCHEMAS.items() for version, schema in versions.items()]


def _nodes(schema):
    """Every subschema that constrains a value (has a type, const or enum)."""
    if isinstance(schema, dict):
        if {"type", "const", "enum"} & set(schema):
            yield schema
        for value in schema.values():
            yield from _nodes(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _nodes(value)


@pytest.mark.parametrize(("kind", "version", "schema"), ALL, ids=[f"{k}-v{v}" for k, v, _ in ALL])
def test_each_schema_is_valid_and_every_field_says_what_it_allows(kind, version, schema):
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == version
    undescribed = [node for node in _nodes(schema) if not node.get("description")]
    assert undescribed == []


def test_paths_are_written_as_a_reader_would():
    assert path_text(["epochs", 3, "test_accuracy"]) == "epochs[3].test_accuracy"
    assert path_text(["host", "gpus", 0, "name"]) == "host.gpus[0].name"
    assert path_text(["devices", "gpu:1", "peak_gflops"]) == "devices.gpu:1.peak_gflops"
    assert path_text([]) == ""


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"schema_version": 1.0}, "schema_version must be 1, 2, 3 or 4, not 1.0."),
        ({"schema_version": True}, "schema_version must be 1, 2, 3 or 4, not True."),
        ({"schema_version": 7}, "schema_version 7 is newer than this app reads (4); update the app."),
        ({}, "The file is missing the field 'schema_version'."),
        ({"schema_version": 1}, "The file is missing the field 'config'."),
    ],
)
def test_the_version_is_checked_before_the_schema(data, says):
    with pytest.raises(RunFileError) as info:
        check_schema("train", data)
    assert str(info.value) == says


def test_whole_numbers_are_never_true_or_1_point_0():
    # JSON Schema itself counts 1.0 (and Python's True) as an integer; a file's whole numbers never are.
    from core.history.checks import VALIDATORS

    epoch = {"type": "integer"}
    validator = VALIDATORS["train", 1].evolve(schema=epoch)
    assert validator.is_valid(3) and not validator.is_valid(3.0) and not validator.is_valid(True)


def test_a_ray_nodes_run_and_its_replicas_are_checked_where_present():
    from core.results import RunResult

    run = RunResult(config={}, host={}, device={"variables_on": "CPU:0"}).to_dict()
    run["config"] = {
        "dataset": "synthetic",
        "model": "softmax",
        "device": "node-b/cpu:all",
        "epochs": 1,
        "batch_size": 50,
        "learning_rate": 0.1,
        "optimizer": "sgd",
        "seed": 0,
        "execution": "keras-fit",
        "train_subset": 100,
        "hidden_units": 8,
    }
    run["device"].update(node="node-b", node_id="af3527e5", replicas=2, global_batch_size=100)
    run["config"].update(precision="float32", xla="auto")
    assert run["schema_version"] == 4 and run["measured"] is None
    v3 = {k: v for k, v in {**run, "schema_version": 3}.items() if k != "measured"}
    v2 = {
        **v3,
        "schema_version": 2,
        "config": {k: v for k, v in run["config"].items() if k not in ("precision", "xla")},
    }
    for version in (run, v3, v2):  # version 2 gained these as optional fields; versions 3 and 4 keep them
        check_schema("train", version)  # accepted as it is
        bad = {**version, "device": {**version["device"], "replicas": 0}}
        with pytest.raises(RunFileError, match="replicas must be a whole number of at least 1"):
            check_schema("train", bad)
