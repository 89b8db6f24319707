"""Chart and picker labels: a run's device, and then only what tells it apart from the runs beside it."""

from __future__ import annotations

from collections.abc import Sequence

from core.engine.executions.base import jit_compile_for
from core.language.i18n import N_, _
from core.settings.config import TrainConfig, canonical_execution

# Short names for a legend, by execution mode (core.settings.config.EXECUTIONS; old names read through its aliases).
EXECUTION_LABELS = {
    "keras-fit": N_("plain fit"),
    "keras-fit-spe": N_("fit, steps_per_execution"),
    "multi-step-loop": N_("multi-step loop"),
}
# A compared setting in a label: (TrainConfig field, how its value reads), execution first.
SETTING_WORDS = {
    "execution": lambda v: _(EXECUTION_LABELS.get(canonical_execution(v), str(v))) if v else "?",
    "precision": lambda v: str(v or "float32"),  # a run from before precision was recorded computed in float32
    "xla": lambda v: f"XLA {v or 'auto'}",
    # What xla resolved to (auto is on for the multi-step loop of a dense model on a CPU, off for plain fit):
    # two runs of one device that differ in it say so, whatever their xla setting said.
    "jit_compile": lambda v: "XLA" if v else "",  # said where on; "CPU (plain fit)" vs "CPU (multi-step loop, XLA)"
    "batch_size": lambda v: _("batch {value}").format(value=v),
    "learning_rate": lambda v: _("lr {value}").format(value=f"{v:g}" if isinstance(v, int | float) else v),
    "optimizer": str,
    "model": str,
    "dataset": str,
    "epochs": lambda v: _("{value} epochs").format(value=v),
    "hidden_units": lambda v: _("{value} units").format(value=v),
    "train_subset": lambda v: _("{value:,} samples").format(value=v) if isinstance(v, int) else _("all samples"),
    "seed": lambda v: _("seed {value}").format(value=v),
}


def distinct_labels(bases: Sequence[str], configs: Sequence[dict]) -> list[str]:
    """Each base ('CPU', 'GPU:0 on gpu-server') with the settings its run differs in from a run of the same base.

    'CPU (plain fit)' and 'CPU (multi-step loop)': a legend entry, a picker entry and a speedup sentence
    then say what differs. Labels may still repeat (identical runs); run_labels adds time and id then.
    """
    out = []
    for base, config in zip(bases, configs, strict=True):
        alike = [c for b, c in zip(bases, configs, strict=True) if b == base]
        differ = [k for k in SETTING_WORDS if len({str(c.get(k)) for c in alike}) > 1]
        if "jit_compile" in differ and "xla" in differ:  # what ran says it ('XLA'), not what chose it
            differ.remove("xla")
        words = [SETTING_WORDS[k](config.get(k)) for k in differ]
        words = [w for w in words if w]  # jit_compile says nothing where off
        out.append(f"{base} ({', '.join(words)})" if words else base)
    return out


def series_labels(configs: Sequence[TrainConfig]) -> list[str]:
    """'CPU', 'GPU:0'; runs on the same device are told apart by what differs: 'CPU (multi-step loop, XLA)'.

    What differs includes the jit_compile each run's xla setting resolves to for its device, mode and model.
    """
    jit = [jit_compile_for(c.device, c.model, c.xla, None, c.execution) for c in configs]
    return distinct_labels(
        [c.device.upper() for c in configs],
        [{**c.to_dict(), "jit_compile": j} for c, j in zip(configs, jit, strict=True)],
    )
