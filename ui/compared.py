"""What the page compares, in words an audience reads: the title, a no-GPU sentence, the settings of a watched
run, and a one-line note for each term the headline uses.

The title follows the comparison (the Train view's plan, or the runs it shows): "TensorFlow training: plain
fit vs multi-step loop on the CPU, live", not "CPU vs GPU" on a laptop that has no GPU.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import streamlit as st

from core import hardware_check
from core.axes import AXES, axis_of
from core.engine import data as datasets
from core.engine import models
from ui.labels import EXECUTION_LABELS

DASHBOARD = "TensorFlow training: CPU vs GPU, live"  # the views that compare nothing of their own
# An execution mode in a sentence for the audience (the labels' short names are for legends).
EXECUTION_WORDS = {
    "keras-fit": "plain Keras fit",
    "keras-fit-spe": "Keras fit with steps_per_execution",
    "multi-step-loop": "the multi-step loop",
}
# A term the headline or the run labels use -> (the words that show it is used, its note in plain words).
TERMS = {
    "Warm-up": (r"epoch 1\b|warm-up", "epoch 1. TensorFlow first traces the Python step into a graph (and XLA "
                "compiles it), so epoch 1 is slow and is left out of every speedup."),
    "Step": (r"\bsteps?\b", "one batch of images: a forward pass, the gradients and one update of the weights."),
    "Plain fit": (r"plain fit", "Keras' model.fit as most code is written: Python hands TensorFlow one step at a "
                  "time, and pays for it at every step."),
    "Multi-step loop": (r"multi-step loop", "many steps inside one tf.function call, so Python and Keras run "
                        "once per call, not once per step."),
    "XLA": (r"\bXLA\b", "TensorFlow's compiler (jit_compile): it fuses a step's many small operations into one "
            "program for the device."),
    "Calls": (r"\bcalls?\b", "one call of the step loop runs many steps, about 0.2 s of training; each call is "
              "one measurement."),
    "Samples/s": (r"samples ?/ ?s|samples per second|throughput", "images trained on per second: the same "
                  "measure whatever the batch size."),
}  # fmt: skip

_title: ContextVar = ContextVar("title_slot")


# -- the title ---------------------------------------------------------------------------------
def title_slot() -> None:
    """The entry's place for the title, first on the page: the view on screen fills it (title_ui)."""
    _title.set([st.container(), False])


def title_ui(text: str) -> None:
    """Write the page's title into the entry's slot (once per run)."""
    slot = _title.get(None)
    if slot is None or slot[1]:
        return
    slot[0].subheader(text, anchor=False)  # a subheader: on a 1280x720 projector the content gets the height
    slot[1] = True


def default_title_ui() -> None:
    """The dashboard's own title, where the view on screen wrote none (History, Scaling, Devices)."""
    title_ui(DASHBOARD)


def _words(field: str, value: Any, plain: bool) -> str:
    if field == "execution":
        return (EXECUTION_WORDS if plain else EXECUTION_LABELS).get(value, str(value))
    return AXES[field].name(value) if field in {a.field for a in AXES.values()} else str(value)


def _place(device: str) -> str:
    return "the CPU" if device.split("/")[-1] == "cpu" else device.upper()


def what(configs: Sequence[dict], plain: bool = False) -> str:
    """'plain fit vs multi-step loop on the CPU', 'CPU vs GPU:0', 'the CPU' (one run): what the runs compare."""
    if not configs:
        return ""
    if len(configs) == 1:
        return _place(configs[0]["device"])
    axis = axis_of(list(configs))
    field = AXES[axis].field if axis else "device"
    names = list(dict.fromkeys(_words(field, c.get(field), plain) for c in configs))
    where = "" if field == "device" else f" on {_place(configs[0]['device'])}"
    return " vs ".join(names) + where


def title(configs: Sequence[dict]) -> str:
    """The Train view's title: what its runs compare, or the dashboard's own while it has none."""
    if not configs:
        return DASHBOARD
    if len(configs) == 1:
        return f"TensorFlow training on {what(configs)}, live"
    return f"TensorFlow: {what(configs)}, live"  # one line at 1280x720 with the sidebar open


# -- the sentence in the main area ---------------------------------------------------------------
def sentence(configs: Sequence[dict], hw: hardware_check.Hardware) -> str:
    """'No GPU on this machine: comparing plain Keras fit with the multi-step loop, both on the CPU.' and the like."""
    if hw.state == hardware_check.CHECKING:
        return "Checking for GPUs… CPU runs need no answer."
    if hw.state == hardware_check.FAILED:
        return hw.message
    gpus = hw.gpus
    found = f"{len(gpus)} GPU{'s' if len(gpus) > 1 else ''} here ({gpus[0].get('name')})" if gpus else ""
    lead = f"**{found}**: " if found else "**No GPU on this machine**: "
    if not configs:
        return lead + "pick what to compare under Device."
    devices = {c["device"] for c in configs}
    if len(configs) == 1:
        return lead + f"one run on {_place(configs[0]['device'])}; pick a comparison under Device."
    axis = axis_of(list(configs))
    field = AXES[axis].field if axis else "device"
    names = [_words(field, c.get(field), plain=True) for c in configs]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " with " + names[-1]
    both = "both" if len(configs) == 2 else "all"
    where = f", {both} on {_place(next(iter(devices)))}" if len(devices) == 1 else ""
    return lead + f"comparing {listed}{where}."


def sentence_ui(configs: Sequence[dict], hw: hardware_check.Hardware) -> None:
    """The sentence, one line above Run (always there, so nothing moves when the check answers)."""
    st.markdown(sentence(configs, hw))


# -- a watched run's settings ----------------------------------------------------------------------
def settings_words(config: dict) -> str:
    """'MLP (128 hidden units), Fashion-MNIST (30,000 training images), 6 epochs, batch 100, Adam at learning rate
    0.001, seed 0': the settings a run shares with the runs beside it, as a person reads them."""
    model = models.REGISTRY[config["model"]].label if config.get("model") in models.REGISTRY else config.get("model")
    if config.get("model") == "mlp":
        model = f"{model} ({config.get('hidden_units')} hidden units)"
    data = datasets.REGISTRY[config["dataset"]].label if config.get("dataset") in datasets.REGISTRY else "?"
    subset = config.get("train_subset")
    data = f"{data} ({subset:,} training images)" if subset else f"{data} (the whole training set)"
    optimizer = {"sgd": "SGD", "adam": "Adam"}.get(config.get("optimizer"), config.get("optimizer"))
    return (
        f"{model}, {data}, {config.get('epochs')} epochs, batch {config.get('batch_size')}, {optimizer} at learning "
        f"rate {config.get('learning_rate'):g}, seed {config.get('seed')}, {config.get('precision', 'float32')}"
    )


def watched_ui(configs: Sequence[dict]) -> None:
    """Next to a watched run's charts: its settings, not this page's sidebar's (which its own Run would use)."""
    if configs:
        st.caption(f"Another page's runs, with their settings: {settings_words(configs[0])}; {what(configs)}.")


# -- the terms ---------------------------------------------------------------------------------------
def terms(text: str) -> list[tuple[str, str]]:
    """(term, note) for each term of TERMS that `text` uses, in TERMS' order."""
    return [(term, note) for term, (used, note) in TERMS.items() if re.search(used, text, re.IGNORECASE)]


def terms_ui(text: str) -> None:
    """One plain-words line per term the headline and the labels use, for the audience."""
    if found := terms(text):
        st.caption("  \n".join(f"**{term}**: {note}" for term, note in found))
