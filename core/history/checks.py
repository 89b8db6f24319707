"""Checking a result document: its schema version, its kind's JSON Schema, then the checks that compare fields.

What a file import and a stored sweep read back both pass (core.history.importer adds the size limits and
the rules for files only). Every problem raises RunFileError with one sentence naming the field by its path
(`epochs[3].test_accuracy`) and what is allowed there, taken from the schema's descriptions; jsonschema's own
messages are never shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import ValidationError

from core.history.allowed import allowed_words
from core.history.keywords import KEYWORDS
from core.history.limits import RunFileError, path_text, show
from core.history.schemas import SCHEMAS, TRAIN_KIND
from core.language.i18n import _
from core.results import SWEEP_KIND, V2_EPOCH_FIELDS, EpochMetrics, RunResult, SweepPoint, SweepResult, crossover
from core.results.measurements import Measurements
from core.results.states import State
from core.settings.config import ConfigError, SweepConfig, TrainConfig

# JSON Schema counts 1.0 as an integer; a file's whole numbers are written as 1, so anything else is refused.
_TYPES = Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
)
_Validator = validators.extend(Draft202012Validator, KEYWORDS, type_checker=_TYPES)  # full-match patterns, quick lists
FORMATS = FormatChecker(())


@FORMATS.checks("iso-8601", raises=ValueError)
def _iso_8601(value: Any) -> bool:
    if isinstance(value, str):
        datetime.fromisoformat(value)
    return True


VALIDATORS = {
    (kind, version): _Validator(schema, format_checker=FORMATS)
    for kind, versions in SCHEMAS.items()
    for version, schema in versions.items()
}


def sentence(error: ValidationError) -> str:
    """One sentence for a schema violation: the field's path and what is allowed there."""
    where = path_text(error.absolute_path) or _("The file")
    if error.validator == "required":
        missing = sorted(set(error.validator_value) - set(error.instance))[0]
        return _("{where} is missing the field {field!r}.").format(where=where, field=missing)
    if error.validator == "additionalProperties" and error.validator_value is False:
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))[0]
        return _("{where} has an unknown field {field}.").format(where=where, field=show(unknown))
    allowed = allowed_words(error.schema)
    return _("{where} must be {allowed}, not {value}.").format(where=where, allowed=allowed, value=show(error.instance))


_EPOCH_AS_GIVEN = ("epoch", *V2_EPOCH_FIELDS)  # an epoch's fields that are not one measurement (the calls: a list)
_FIRST = {"required": 0, "additionalProperties": 1}


def _order(error: ValidationError) -> tuple:
    """The outermost problem first, then fields in order, so the sentence for a file is always the same."""
    path = [
        (isinstance(k, str), k if isinstance(k, int) else 0, k if isinstance(k, str) else "")
        for k in error.absolute_path
    ]
    return len(path), path, _FIRST.get(error.validator, 2)


def check_version(kind: str, data: dict[str, Any]) -> int:
    """The document's schema_version, if this app has a schema for it."""
    versions = SCHEMAS[kind]
    if "schema_version" not in data:
        raise RunFileError(_("The file is missing the field 'schema_version'."))
    version, newest = data["schema_version"], max(versions)
    if type(version) is int and newest < version < 10**6:  # not true, not 1.0
        said = _("schema_version {version} is newer than this app reads ({newest}); update the app.")
        raise RunFileError(said.format(version=version, newest=newest))
    if type(version) is not int or version not in versions:
        *known, last = [str(v) for v in sorted(versions)]
        if not known:
            raise RunFileError(
                _("schema_version must be {allowed}, not {value}.").format(allowed=last, value=show(version))
            )
        said = _("schema_version must be {some} or {last}, not {value}.")
        raise RunFileError(said.format(some=", ".join(known), last=last, value=show(version)))
    return version


def check_schema(kind: str, data: Any) -> None:
    """Raise RunFileError naming the first place where `data` breaks its kind's schema, at its version."""
    if not isinstance(data, dict):
        raise RunFileError(_("The file must be an object ({{...}}), not {value}.").format(value=show(data)))
    errors = sorted(VALIDATORS[kind, check_version(kind, data)].iter_errors(data), key=_order)
    if errors:
        raise RunFileError(sentence(errors[0]))


def _config(cls: type, value: dict[str, Any]) -> Any:
    try:
        return cls.from_dict(value)
    except ConfigError as err:
        raise RunFileError(_("config: {problem}").format(problem=err)) from None


# -- the checks that compare fields, once the schema holds ---------------------------------------------
def _run(data: dict[str, Any]) -> RunResult:
    config = _config(TrainConfig, data["config"])
    epochs = data["epochs"]
    if len(epochs) > config.epochs:
        said = _("epochs lists {count} epochs but config.epochs is {epochs}.")
        raise RunFileError(said.format(count=len(epochs), epochs=config.epochs))
    if data["status"] == State.COMPLETED and len(epochs) != config.epochs:
        said = _("A completed run has all {epochs} epochs; this one lists {count}.")
        raise RunFileError(said.format(count=len(epochs), epochs=config.epochs))
    for i, epoch in enumerate(epochs):
        if epoch["epoch"] != i + 1:
            said = _("epochs[{i}].epoch must be {number} (epochs are numbered 1, 2, ... in order), not {value}.")
            raise RunFileError(said.format(i=i, number=i + 1, value=epoch["epoch"]))
        _consistent_epoch(f"epochs[{i}]", epoch, config, data["device"])
    return RunResult(
        # TrainConfig's values, but the execution mode in the file's own words: an older name for the same
        # mode ("fast") stays as written, and fields a later version added (precision, xla) stay out, so an
        # old file exports unchanged; TrainConfig reads them as their defaults.
        config={
            **{k: v for k, v in config.to_dict().items() if k in data["config"]},
            "execution": data["config"]["execution"],
        },
        host=data["host"],
        device=data["device"],
        status=data["status"],
        error=data.get("error"),
        epochs=[EpochMetrics(**{k: v if k in _EPOCH_AS_GIVEN else _measured(v) for k, v in e.items()}) for e in epochs],
        started_at=data.get("started_at"),
        finished_at=data.get("finished_at"),
        run_id=data.get("run_id"),
        schema_version=data["schema_version"],
        measured=Measurements.from_dict(data["measured"])
        if data.get("measured")
        else Measurements.from_device(data["device"]),
    )


# A recorded figure may differ from the one the file's other fields give by this much (rounding by another writer).
AGREE = 0.01


def _consistent_epoch(where: str, epoch: dict[str, Any], config: TrainConfig, device: dict[str, Any]) -> None:
    """An epoch whose figures contradict each other, or the run's, is refused: a headline made from it would lie."""
    if epoch["warmup"] != (epoch["epoch"] == 1):
        said = _("{where}.warmup must be {value}: epoch 1, and only epoch 1, is the warm-up (tracing and compiling).")
        raise RunFileError(said.format(where=where, value=str(epoch["epoch"] == 1).lower()))
    batch = device.get("global_batch_size") or config.batch_size
    samples = (config.train_size // batch) * batch
    trained = epoch["samples_per_second"] * epoch["train_seconds"]
    if samples and abs(trained / samples - 1) > AGREE:
        said = _(
            "{where}.samples_per_second must be the epoch's {samples:,} training samples over its train_seconds "
            "({rate:,.6g}), not {value}."
        )
        rate = samples / epoch["train_seconds"]
        raise RunFileError(
            said.format(where=where, samples=samples, rate=rate, value=show(epoch["samples_per_second"]))
        )
    flops, gflops = device.get("train_flops_per_sample"), epoch.get("gflops_per_second")
    if isinstance(flops, int | float) and flops > 0 and gflops is not None:
        expected = flops * epoch["samples_per_second"] / 1e9
        if abs(gflops / expected - 1) > AGREE:
            said = _(
                "{where}.gflops_per_second must be device.train_flops_per_sample x samples_per_second "
                "({expected:,.6g}), not {value}."
            )
            raise RunFileError(said.format(where=where, expected=expected, value=show(gflops)))
    seconds = [c["seconds"] for c in epoch.get("calls") or []]
    if any(b < a for a, b in zip(seconds, seconds[1:], strict=False)):
        said = _("{where}.calls must be in time order (each call's seconds at least the one before).")
        raise RunFileError(said.format(where=where))


def _measured(value: Any) -> Any:
    """A measurement as the app holds it: a float (1 in a file is 1.0), or true/false/null as they are."""
    return value if value is None or isinstance(value, bool) else float(value)


_AS_GIVEN = {"device", "batch_size", "steps", "error", "samples_per_second_repeats"}


def _point(item: dict[str, Any]) -> SweepPoint:
    values = {f.name: item.get(f.name) for f in fields(SweepPoint)}  # an absent measurement is None
    values = {k: v if k in _AS_GIVEN else _measured(v) for k, v in values.items()}
    values["samples_per_second_repeats"] = tuple(map(float, item.get("samples_per_second_repeats") or ()))
    return SweepPoint(**values)


def _sweep(data: dict[str, Any]) -> SweepResult:
    config = _config(SweepConfig, data["config"])
    model = data["model"]
    for name, setting in (("name", config.model), ("hidden_units", config.hidden_units)):
        if name in model and model[name] != setting:
            said = _("model.{name} is {value} but the config says {setting!r}.")
            raise RunFileError(said.format(name=name, value=show(model[name]), setting=setting))
    for name in data["devices"]:
        if name not in config.devices:
            raise RunFileError(_("devices has {name}, which config.devices does not list.").format(name=show(name)))
    points, seen = [], set()
    for i, item in enumerate(data["points"]):
        point = _point(item)
        where, pair = f"points[{i}]", (point.device, point.batch_size)
        if point.device not in config.devices or point.batch_size not in config.batch_sizes:
            said = _("{where} is {device} at batch {batch}, which the config does not list.")
            raise RunFileError(said.format(where=where, device=show(point.device), batch=point.batch_size))
        if pair in seen:
            said = _("{where} measures {device} at batch {batch} a second time.")
            raise RunFileError(said.format(where=where, device=point.device, batch=point.batch_size))
        seen.add(pair)
        rate, low, high = point.samples_per_second, point.samples_per_second_min, point.samples_per_second_max
        if rate is None and not point.error:
            raise RunFileError(_("{where} has no samples_per_second and no error saying why.").format(where=where))
        if rate is not None and ((low is not None and low > rate) or (high is not None and rate > high)):
            raise RunFileError(_("{where}.samples_per_second must lie between its _min and _max.").format(where=where))
        points.append(point)
    return SweepResult(
        # SweepConfig's values for the fields the file has: fields a later version added (precision, xla) stay
        # out of an old file, so it exports unchanged; SweepConfig reads them as their defaults.
        config={k: v for k, v in config.to_dict().items() if k in data["config"]},
        host=data["host"],
        devices=data["devices"],
        model=model,
        points=points,
        status=data["status"],
        error=data.get("error"),
        started_at=data.get("started_at"),
        finished_at=data.get("finished_at"),
        run_id=data.get("run_id"),
        # Recomputed from the points, never the file's own words; only where the file said one (older files did).
        crossover=crossover.crossover_sentence(points) if "crossover" in data else None,
    )


CROSS_CHECKS: dict[str, Callable[[dict[str, Any]], RunResult | SweepResult]] = {TRAIN_KIND: _run, SWEEP_KIND: _sweep}


def check_result(kind: str, data: Any) -> RunResult | SweepResult:
    """A RunResult or SweepResult from a document of `kind` that passes its schema and cross-field checks."""
    check_schema(kind, data)
    return CROSS_CHECKS[kind](data)
