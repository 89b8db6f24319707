"""Checking a sweep document field by field: what SweepResult.from_dict (and so a sweep import) trusts.

Every problem raises SweepFileError (ConfigError for the config) with one sentence naming the field and
what is allowed. Values are kept as they are, so a checked document round-trips exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from core.config import MAX_BATCH
from core.history.limits import check_keys, show, show_key
from core.sweep_config import MAX_BATCH_SIZES, MAX_DEVICES, MAX_REPEATS, MAX_STEPS, SWEEP_KIND, SweepConfig
from core.sweep_results import STATUSES, SWEEP_SCHEMA_VERSION, SweepFileError, SweepPoint, SweepResult


def check_sweep(data: Any) -> SweepResult:
    """A SweepResult from a sweep document (SweepResult.to_dict()'s shape); SweepFileError names the first problem."""
    if not isinstance(data, dict) or data.get("kind") != SWEEP_KIND:
        raise SweepFileError('A sweep file must be a JSON object with "kind": "sweep".')
    version = data.get("schema_version")
    if type(version) is not int or version != SWEEP_SCHEMA_VERSION:  # not true, not 1.0
        raise SweepFileError(
            f"This sweep file has schema_version {show(version)}; this version reads {SWEEP_SCHEMA_VERSION}."
        )
    check_keys("The file", data, _TOP_FIELDS, _TOP_REQUIRED, SweepFileError)
    if data["status"] not in STATUSES:
        raise SweepFileError(f"status must be one of {', '.join(STATUSES)}, not {show(data['status'])}.")
    config = _config(data["config"])
    _text("crossover", data.get("crossover"))  # recomputed from the points, never trusted
    return SweepResult(
        config=config.to_dict(),
        host=_fields("host", data["host"], _HOST_RULES, open_ended=True),
        devices=_device_infos(data["devices"], config),
        model=_model(data["model"], config),
        points=_points(data["points"], config),
        status=data["status"],
        error=_text("error", data.get("error")),
        started_at=_text("started_at", data.get("started_at")),
        finished_at=_text("finished_at", data.get("finished_at")),
        run_id=_text("run_id", data.get("run_id")),
    )


Rule = Callable[[str, Any], Any]
_TOP_FIELDS = {"schema_version", "kind", "run_id", "status", "error", "started_at", "finished_at", "config", "model",
               "host", "devices", "crossover", "points"}  # fmt: skip
_TOP_REQUIRED = _TOP_FIELDS - {"run_id", "error", "started_at", "finished_at", "crossover"}
_COUNTS = {"batch_size": (1, MAX_BATCH), "steps": (0, MAX_STEPS)}  # a failed point timed 0 steps
_OPTIONAL_TEXT = {"error"}
MAX_LIST = max(MAX_DEVICES, MAX_BATCH_SIZES)  # the longest list a config holds


def _text(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise SweepFileError(f"{name} must be text or null, not {type(value).__name__}.")
    return value


def _number(where: str, value: Any, optional: bool = True) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise SweepFileError(f"{where} must be a finite number of at least 0, not {show(value)}.")
    return float(value)


def _whole(least: int, most: int | None = None, optional: bool = False) -> Rule:
    def check(where: str, value: Any) -> int | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < least or (most and value > most):
            allowed = f"from {least} to {most}" if most else f"of at least {least}"
            raise SweepFileError(f"{where} must be a whole number {allowed}, not {show(value)}.")
        return value

    return check


def _words(optional: bool = False) -> Rule:
    def check(where: str, value: Any) -> str | None:
        if not isinstance(value, str) and not (optional and value is None):
            raise SweepFileError(f"{where} must be text{' or null' if optional else ''}, not {show(value)}.")
        return value

    return check


def _fields(where: str, value: Any, rules: dict[str, Rule], open_ended: bool = False) -> dict[str, Any]:
    """Check an object's fields by rule (each may be absent); unknown fields are refused unless open_ended."""
    if not isinstance(value, dict):
        raise SweepFileError(f"{where} must be an object, not {show(value)}.")
    unknown = [] if open_ended else sorted(set(value) - set(rules))
    if unknown:
        raise SweepFileError(f"{where} has an unknown field {show(unknown[0])}.")
    for name, rule in rules.items():
        if name in value:
            rule(f"{where}.{name}", value[name])
    return value


def _gpus(where: str, value: Any) -> list:
    if not isinstance(value, list):
        raise SweepFileError(f"{where} must be a list, not {show(value)}.")
    return [_fields(f"{where}[{i}]", gpu, _GPU_RULES, open_ended=True) for i, gpu in enumerate(value)]


# host is devices.HostInfo.to_dict(): its known fields are checked; fields a newer build adds are kept.
_GPU_RULES = {
    "index": _whole(0),
    "name": _words(),
    "compute_capability": _words(True),
    "memory_mb": _whole(0, None, True),
}
_HOST_RULES = {
    **{name: _words(True) for name in ("hostname", "platform", "python", "tensorflow", "keras", "cpu_model")},
    **{name: _words(True) for name in ("cuda_build", "cudnn_build")},  # None: a CPU-only build
    "cpu_cores": _whole(0),
    "logical_cpus": _whole(0),
    "gpus": _gpus,
}
_DEVICE_RULES = {
    **{name: _words() for name in ("requested", "tf_device", "name", "label")},
    "variables_on": _words(True),
    "peak_gflops": lambda where, value: _number(where, value),
    "peak_matrix_size": _whole(1, None, True),
}
_MODEL_RULES = {
    "name": _words(),
    "hidden_units": _whole(1),
    **{name: _whole(0) for name in ("parameters", "train_flops_per_sample", "forward_flops_per_sample")},
}


def _config(value: Any) -> SweepConfig:
    settings = _fields("config", value, {}, open_ended=True)
    for name, setting in settings.items():
        # Short values only, so SweepConfig's sentences, which quote what they refuse, stay one short line.
        items = setting if isinstance(setting, list) else [setting]
        longest = 10 if isinstance(setting, list) else 40
        if len(items) > MAX_LIST or any(isinstance(x, (list, dict)) or len(repr(x)) > longest for x in items):
            raise SweepFileError(
                f"config.{show_key(name)} must be a short value or a list of at most {MAX_LIST}, not {show(setting)}."
            )
    return SweepConfig.from_dict(settings)


def _model(value: Any, config: SweepConfig) -> dict[str, Any]:
    model = _fields("model", value, _MODEL_RULES)
    for name, setting in (("name", config.model), ("hidden_units", config.hidden_units)):
        if name in model and model[name] != setting:
            raise SweepFileError(f"model.{name} is {show(model[name])} but the config says {setting!r}.")
    return model


def _device_infos(value: Any, config: SweepConfig) -> dict[str, dict[str, Any]]:
    infos = _fields("devices", value, {}, open_ended=True)
    for name, info in infos.items():
        if name not in config.devices:
            raise SweepFileError(f"devices has {show(name)}, which config.devices does not list.")
        _fields(f"devices.{name}", info, _DEVICE_RULES)
    return infos


def _points(value: Any, config: SweepConfig) -> list[SweepPoint]:
    if not isinstance(value, list):
        raise SweepFileError(f"points must be a list, not {show(value)}.")
    points, seen = [], set()
    for i, item in enumerate(value):
        point = _point(i, item)
        if point.device not in config.devices or point.batch_size not in config.batch_sizes:
            raise SweepFileError(
                f"points[{i}] is {show(point.device)} at batch {point.batch_size}, which the config does not list."
            )
        if (point.device, point.batch_size) in seen:
            raise SweepFileError(f"points[{i}] measures {point.device} at batch {point.batch_size} a second time.")
        seen.add((point.device, point.batch_size))
        points.append(point)
    return points


def _point(i: int, value: Any) -> SweepPoint:
    where = f"points[{i}]"
    if not isinstance(value, dict):
        raise SweepFileError(f"{where} must be an object.")
    names = [f.name for f in fields(SweepPoint)]  # in order, so the first problem named is always the same
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise SweepFileError(f"{where} has an unknown field {show(unknown[0])}.")
    kwargs: dict[str, Any] = {}
    for name in names:
        item = value.get(name)
        if name == "device":
            if not isinstance(item, str) or not item:
                raise SweepFileError(f"{where}.device must be a device name such as cpu or gpu.")
            kwargs[name] = item
        elif name in _COUNTS:
            kwargs[name] = _whole(*_COUNTS[name])(f"{where}.{name}", item)
        elif name in _OPTIONAL_TEXT:
            kwargs[name] = _text(f"{where}.{name}", item)
        elif name == "samples_per_second_repeats":
            item = [] if item is None else item
            if not isinstance(item, list) or len(item) > MAX_REPEATS:
                raise SweepFileError(f"{where}.{name} must be a list of at most {MAX_REPEATS} numbers.")
            kwargs[name] = tuple(_number(f"{where}.{name}", x, optional=False) for x in item)
        else:
            kwargs[name] = _number(f"{where}.{name}", item)
    point = SweepPoint(**kwargs)
    rate, low, high = point.samples_per_second, point.samples_per_second_min, point.samples_per_second_max
    if rate is None and not point.error:
        raise SweepFileError(f"{where} has no samples_per_second and no error saying why.")
    if rate is not None and ((low is not None and low > rate) or (high is not None and rate > high)):
        raise SweepFileError(f"{where}.samples_per_second must lie between its _min and _max.")
    return point
