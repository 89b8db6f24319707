"""The JSON Schema of each result file kind and version; each field's "description" says what is allowed.

A field's description is the end of its refusal sentence ("epochs[3].test_accuracy must be <description>,
not 1.5."), so it is written as an allowed value. SCHEMAS maps a file's kind, then its schema_version, to its
schema: a new version of the format adds an entry here (and the fields it adds), not a new code path.
Checks that compare fields with each other (epochs numbered in order, points listed in the config) are in
core.history.checks.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from core.history.fields import SCALAR as _SCALAR
from core.history.fields import closed, list_of, number, open_ended, text, whole
from core.history.measured import MEASURED
from core.results import MAX_CALLS_PER_EPOCH, MAX_STRIP, STATUSES
from core.results.states import ENDED
from core.settings.config import (
    MAX_BATCH,
    MAX_BATCH_SIZES,
    MAX_DEVICES,
    MAX_EPOCHS,
    MAX_REPEATS,
    MAX_STEPS,
    SweepConfig,
    TrainConfig,
)

NUM_CLASSES = 10  # every dataset's labels are 0..9

# Upper bounds that no real measurement reaches; the loss bound is float32's largest finite value,
# which training records in place of a diverged (infinite) loss.
MAX_LOSS = float(np.finfo(np.float32).max)
MAX_SECONDS = 1e7  # about 115 days for one epoch
MAX_RATE = 1e13  # samples or GFLOP per second
IMPORTABLE_STATUSES = ENDED  # a running job is never in a file
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
MAX_CONFIG_LIST = max(MAX_DEVICES, MAX_BATCH_SIZES)  # the longest list a config holds


TIMESTAMP = {
    "type": ["string", "null"],
    "format": "iso-8601",
    "description": "null or an ISO-8601 time such as 2026-01-31T12:00:00+00:00",
}
RUN_ID = {
    "type": ["string", "null"],
    "pattern": RUN_ID_PATTERN,
    "description": "null or letters, digits, '.', '_' or '-' (at most 64)",
}
STATUS = {"type": "string", "enum": list(STATUSES), "description": f"one of {', '.join(IMPORTABLE_STATUSES)}"}

# host is devices.HostInfo.to_dict(): its known fields are checked; fields a newer build adds are kept.
GPU = open_ended(
    {"index": whole(0), "name": text(), "compute_capability": text(nullable=True), "memory_mb": whole(0, nullable=True)}
)
HOST = open_ended(
    {
        **{name: text(nullable=True) for name in ("hostname", "platform", "python", "tensorflow", "keras")},
        **{name: text(nullable=True) for name in ("cpu_model", "cuda_build", "cudnn_build")},  # None: a CPU-only build
        "cpu_cores": whole(0),
        "logical_cpus": whole(0),
        "gpus": list_of(GPU),
    }
)


# What every version 1 file says about itself, whatever its kind.
ENVELOPE_V1 = {
    "schema_version": {"const": 1, "description": "1"},
    "run_id": RUN_ID,
    "status": STATUS,
    "error": text(nullable=True),
    "started_at": TIMESTAMP,
    "finished_at": TIMESTAMP,
}


# -- a training run's file (RunResult.to_dict()) ---------------------------------------------------------
EPOCH = closed(
    {
        "epoch": whole(1),  # and numbered 1, 2, ... in order: core.history.checks
        "train_loss": number(0, MAX_LOSS),
        "train_accuracy": number(0, 1),
        "test_loss": number(0, MAX_LOSS),
        "test_accuracy": number(0, 1),
        "train_seconds": number(0, MAX_SECONDS),
        "eval_seconds": number(0, MAX_SECONDS),
        "samples_per_second": number(0, MAX_RATE),
        "warmup": {"type": "boolean", "description": "true or false"},
        "gflops_per_second": number(0, MAX_RATE, nullable=True),
    },
    required=(
        "epoch",
        "train_loss",
        "train_accuracy",
        "test_loss",
        "test_accuracy",
        "train_seconds",
        "eval_seconds",
        "samples_per_second",
        "warmup",
    ),
)
SHORT_VALUE = {"type": _SCALAR, "maxLength": 100, "description": "a single short value"}
# Version 1's config fields, all required; TrainConfig itself then checks each value.
RUN_CONFIG_V1 = (
    "dataset",
    "model",
    "device",
    "epochs",
    "batch_size",
    "learning_rate",
    "optimizer",
    "seed",
    "execution",
    "train_subset",
    "hidden_units",
)
RUN_V1 = closed(
    {
        **ENVELOPE_V1,
        "kind": {"const": "train", "description": '"train" (or no kind)'},
        "config": closed({f.name: SHORT_VALUE for f in fields(TrainConfig)}, required=RUN_CONFIG_V1),
        "host": HOST,
        "device": open_ended({"variables_on": text(nullable=True)}),
        "epochs": list_of(EPOCH),
    },
    required=("schema_version", "config", "host", "device", "status", "epochs"),
)


# -- a sweep's file (SweepResult.to_dict()) --------------------------------------------------------------
# Short values only, so SweepConfig's sentences, which quote what they refuse, stay one short line.
SWEEP_SETTING = {
    "type": [*_SCALAR, "array"],
    "maxLength": 38,
    "maxItems": MAX_CONFIG_LIST,
    # 72: a Ray node's device, NODE/gpu:0 with a node name of up to 63 characters (core.settings.config).
    "items": {"type": _SCALAR, "maxLength": 72, "description": "a short value"},
    "description": f"a short value or a list of at most {MAX_CONFIG_LIST} short values",
}
DEVICE_INFO = closed(
    {
        **{name: text() for name in ("requested", "tf_device", "name", "label")},
        "variables_on": text(nullable=True),
        "peak_gflops": number(0, nullable=True),
        "peak_matrix_size": whole(1, nullable=True),
        "jit_compile": {"type": "boolean", "description": "true or false"},  # XLA on for this device's steps
        # Optional (core.analysis.roofline): a sweep from before them, or whose measurement failed, has none or null.
        "bandwidth_gbs": number(0, nullable=True),
        "step_floor_seconds": number(0, nullable=True),
    }
)
MODEL = closed(
    {
        "name": text(),
        "hidden_units": whole(1),
        **{name: whole(0) for name in ("parameters", "train_flops_per_sample", "forward_flops_per_sample")},
        **{name: whole(0) for name in ("sample_bytes", "step_bytes")},  # optional: core.engine.traffic
    }
)
POINT = closed(
    {
        "device": {"type": "string", "minLength": 1, "description": "a device name such as cpu or gpu"},
        "batch_size": whole(1, MAX_BATCH),
        "steps": whole(0, MAX_STEPS),  # a failed point timed 0 steps
        "samples_per_second": number(0, nullable=True),
        "samples_per_second_min": number(0, nullable=True),
        "samples_per_second_max": number(0, nullable=True),
        "samples_per_second_repeats": {
            "type": ["array", "null"],
            "items": number(0),
            "maxItems": MAX_REPEATS,
            "description": f"a list of at most {MAX_REPEATS} numbers",
        },
        **{name: number(0, nullable=True) for name in ("step_ms", "gflops_per_second", "utilisation")},
        **{name: number(0, nullable=True) for name in ("compile_seconds", "warmup_seconds")},
        "error": text(nullable=True),
    },
    required=("device", "batch_size", "steps"),
)
SWEEP_V1 = closed(
    {
        **ENVELOPE_V1,
        "kind": {"const": "sweep", "description": '"sweep"'},
        "config": closed({f.name: SWEEP_SETTING for f in fields(SweepConfig)}),  # SweepConfig fills the defaults
        "model": MODEL,
        "host": HOST,
        "devices": {"type": "object", "additionalProperties": DEVICE_INFO, "description": "an object ({...})"},
        "crossover": text(nullable=True),  # recomputed from the points, never trusted
        "points": list_of(POINT),
    },
    required=("schema_version", "kind", "status", "config", "model", "host", "devices", "points"),
)

# -- a training run's file, version 2: each epoch adds its calls and what the model learned -------------------
CALL = closed(
    {
        "seconds": number(0, MAX_SECONDS * MAX_EPOCHS),  # training seconds of the run so far
        "samples": whole(0),
        "steps": whole(1),
        "call_seconds": number(0, MAX_SECONDS),
        "train_loss": number(0, MAX_LOSS),
        "train_accuracy": number(0, 1),
    },
    required=("seconds", "samples", "steps", "call_seconds", "train_loss", "train_accuracy"),
)
LABELS = list_of(whole(0, NUM_CLASSES - 1), MAX_STRIP, f"a list of at most {MAX_STRIP} labels from 0 to 9")
TEMPLATE = {**list_of(whole(0, 255), 784, "a list of 784 whole numbers from 0 to 255"), "minItems": 784}
LEARNED = {
    **closed(
        {
            "indices": list_of(whole(0), MAX_STRIP, f"a list of at most {MAX_STRIP} test-set rows"),
            "labels": LABELS,
            "predictions": LABELS,
            "templates": {
                **list_of(TEMPLATE, NUM_CLASSES, "null or a list of 10 templates of 784 numbers from 0 to 255"),
                "type": ["array", "null"],
                "minItems": NUM_CLASSES,
            },
            "template_scale": number(0, nullable=True),
        },
        required=("indices", "labels", "predictions"),
    ),
    "type": ["object", "null"],
    "description": "null or an object ({...})",
}
EPOCH_V2 = closed(
    {
        **EPOCH["properties"],
        "calls": list_of(CALL, MAX_CALLS_PER_EPOCH, f"a list of at most {MAX_CALLS_PER_EPOCH} calls"),
        "learned": LEARNED,
    },
    required=(*EPOCH["required"], "calls", "learned"),  # version 2 writes both on every epoch (learned may be null)
)
RUN_V2 = closed(
    {
        **RUN_V1["properties"],
        "schema_version": {"const": 2, "description": "2"},
        # Optional: a Ray node's name and id, and MirroredStrategy's replicas and global batch (one here).
        "device": open_ended(
            {
                "variables_on": text(nullable=True),
                **{name: text() for name in ("node", "node_id")},
                **{name: whole(1) for name in ("replicas", "global_batch_size")},
            }
        ),
        "epochs": list_of(EPOCH_V2),
    },
    required=tuple(RUN_V1["required"]),
)

# -- version 3: the config's precision and xla are required; the device says what it computed in -------------
RUN_V3 = closed(
    {
        **RUN_V2["properties"],
        "schema_version": {"const": 3, "description": "3"},
        "config": closed(
            {f.name: SHORT_VALUE for f in fields(TrainConfig)}, required=(*RUN_CONFIG_V1, "precision", "xla")
        ),
        "device": open_ended(
            {
                **RUN_V2["properties"]["device"]["properties"],
                **{name: text(nullable=True) for name in ("compute_dtype", "peak_dtype")},
                "jit_compile": {"type": "boolean", "description": "true or false"},
            }
        ),
    },
    required=tuple(RUN_V1["required"]),
)

# -- version 4: what the engine measured beside the epochs, a typed record (core.results.measurements) ----------
EPOCH_V4 = closed(
    {**EPOCH_V2["properties"], "others_cores": number(0, 10_000, nullable=True)},
    required=(*EPOCH_V2["required"], "others_cores"),  # written on every epoch, null where /proc was not there
)
RUN_V4 = closed(
    {
        **RUN_V3["properties"],
        "schema_version": {"const": 4, "description": "4"},
        "measured": MEASURED,
        "epochs": list_of(EPOCH_V4),
    },
    required=(*RUN_V1["required"], "measured"),  # written on every run, null where nothing was measured
)

TRAIN_KIND = "train"  # a training run's file may leave "kind" out
SCHEMAS: dict[str, dict[int, dict[str, Any]]] = {
    TRAIN_KIND: {1: RUN_V1, 2: RUN_V2, 3: RUN_V3, 4: RUN_V4},
    "sweep": {1: SWEEP_V1},
}
