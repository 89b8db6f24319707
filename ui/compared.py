"""What the page compares, in words an audience reads: the title, a no-GPU sentence, the settings of a watched
run, and a one-line note for each term the headline uses.

The title follows the comparison (the Train view's plan, or the runs it shows): "TensorFlow training: plain
fit vs multi-step loop on the CPU, live", not "CPU vs GPU" on a laptop that has no GPU; the other views say what
they show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import streamlit as st

from core.analysis import changes
from core.engine import data as datasets
from core.engine import models
from core.language import i18n
from core.language.i18n import N_, _, ngettext
from core.machine import hardware_check
from core.machine.device_spec import device_name
from core.settings.axes import AXES, axis_of
from ui.labels import EXECUTION_LABELS

DASHBOARD = N_("TensorFlow training, live")  # the Train view with nothing to compare yet: true with or without a GPU
# The other views' titles: what each shows, true on any machine ("CPU vs GPU" had titled them on one with no GPU).
VIEW_TITLES = {
    "history": N_("History: this machine's runs and imported ones, to overlay and compare"),
    "scaling": N_("Scaling: training throughput by batch size, on each device"),
    "devices": N_("Devices: what this machine can train on, as measured"),
}
# An execution mode in a sentence for the audience (the labels' short names are for legends).
EXECUTION_WORDS = {
    "keras-fit": N_("plain Keras fit"),
    "keras-fit-spe": N_("Keras fit with steps_per_execution"),
    "multi-step-loop": N_("the multi-step loop"),
}
# A term the headline or the run labels use -> (the words that show it is used, its note in plain words).
# The patterns hold the Chinese words too (第 1 轮, 多步循环 ...): a Chinese page's headline uses those.
TERMS = {
    N_("Warm-up"): (
        r"epoch 1\b|warm-up|第 ?1 ?轮|预热",
        N_(
            "epoch 1. TensorFlow first traces the Python step into a "
            "graph (and XLA compiles it), so epoch 1 is slow and is left out of every speedup."
        ),
    ),
    N_("Step"): (
        r"\bsteps?\b|步",
        N_("one batch of images: a forward pass, the gradients and one update of the weights."),
    ),
    N_("Plain fit"): (
        r"plain fit|普通 ?(model\.)?fit|\(model\.fit\)",
        N_(
            "Keras' model.fit as most code is written: Python hands TensorFlow "
            "one step at a time, and pays for it at every step."
        ),
    ),
    N_("Multi-step loop"): (
        r"multi-step loop|多步循环",
        N_("many steps inside one tf.function call, so Python and Keras run once per call, not once per step."),
    ),
    "XLA": (
        r"\bXLA\b",
        N_(
            "TensorFlow's compiler (jit_compile): it fuses a step's many small operations into one "
            "program for the device."
        ),
    ),
    N_("Calls"): (
        r"\bcalls?\b|次调用",
        N_(
            "one call of the training function runs one or more steps (plain fit: "
            "one; steps_per_execution and the multi-step loop: up to 0.2 s of them, the loop at least four calls "
            "an epoch); each call is one measurement."
        ),
    ),
    N_("Samples/s"): (
        r"samples ?/ ?s|samples per second|throughput|样本/秒|每秒样本",
        N_("images trained on per second: the same measure whatever the batch size."),
    ),
}

# core.machine.hardware_check's sentences for a failed check, made in its own thread (English): read back by their own
# template, then said in the page's language; a sentence of another wording is shown as it is.
CHECK_FAILED = (
    N_("The hardware check did not answer within {seconds} s, so GPUs are off."),
    N_("The hardware check could not start ({why}), so GPUs are off."),
    N_("The hardware check failed ({why}), so GPUs are off."),
    N_("The hardware check printed something that is not JSON, so GPUs are off."),
    N_("The hardware check answered in an unknown format, so GPUs are off."),
)

_title: ContextVar = ContextVar("title_slot")


# -- the title ---------------------------------------------------------------------------------
FAIR = N_("Same model, data, seed and batches in every run; speed is samples per second after epoch 1 (it compiles).")


def title_slot() -> None:
    """The entry's place for the title, first on the page: the view on screen fills it (title_ui)."""
    _title.set([st.container(), False])


def title_ui(text: str) -> None:
    """Write the page's title into the entry's slot (once per run)."""
    slot = _title.get(None)
    if slot is None or slot[1]:
        return
    # A subheader: on a 1280x720 projector the content gets the height; what every comparison shares, beside it.
    slot[0].subheader(text, anchor=False, help=_(FAIR))
    slot[1] = True


def default_title_ui(view: str = "") -> None:
    """The view's own title (VIEW_TITLES, by its address path), where the view on screen wrote none."""
    title_ui(_(VIEW_TITLES.get(view, DASHBOARD)))


def _words(field: str, value: Any, plain: bool) -> str:
    if field == "execution":
        found = (EXECUTION_WORDS if plain else EXECUTION_LABELS).get(value)
        return _(found) if found else str(value)
    return AXES[field].name(value) if field in {a.field for a in AXES.values()} else str(value)


def _place(device: str) -> str:
    return _("the CPU") if device_name(device).local == "cpu" else device.upper()


def what(configs: Sequence[dict], plain: bool = False) -> str:
    """'plain fit vs multi-step loop on the CPU', 'CPU vs GPU:0', 'the CPU' (one run): what the runs compare."""
    if not configs:
        return ""
    if len(configs) == 1:
        return _place(configs[0]["device"])
    if changes.chained(list(configs)) and len({c["device"] for c in configs}) == 1:
        return _("{names} on {device}").format(
            names=" → ".join(_steps(list(configs), plain)), device=_place(configs[0]["device"])
        )
    axis = axis_of(list(configs))
    field = AXES[axis].field if axis else "device"
    names = list(dict.fromkeys(_words(field, c.get(field), plain) for c in configs))
    if field == "device":
        return " vs ".join(names)
    return _("{names} on {device}").format(names=" vs ".join(names), device=_place(configs[0]["device"]))


def title(configs: Sequence[dict]) -> str:
    """The Train view's title: what its runs compare, or the dashboard's own while it has none."""
    if not configs:
        return _(DASHBOARD)
    if len(configs) == 1:
        return _("TensorFlow training on {what}, live").format(what=what(configs))
    if changes.chained(list(configs)):  # one line at 1280x720: the steps, and the device in the sentence below
        return _("TensorFlow: {steps}, live").format(steps=" → ".join(_steps(list(configs), plain=False)))
    return _("TensorFlow: {what}, live").format(what=what(configs))  # one line at 1280x720 with the sidebar open


# -- the sentence in the main area ---------------------------------------------------------------
def sentence(configs: Sequence[dict], hw: hardware_check.Hardware) -> str:
    """'No GPU on this machine: comparing plain Keras fit with the multi-step loop, both on the CPU.' and the like."""
    if hw.state == hardware_check.CHECKING:
        return _("Checking for GPUs… CPU runs need no answer.")
    if hw.state == hardware_check.FAILED:
        return check_failed(hw.message)
    gpus = hw.gpus
    found = ngettext("{n} GPU here ({name})", "{n} GPUs here ({name})", len(gpus)) if gpus else ""
    lead = (f"**{found}**: " if found else _("**No GPU on this machine**: ")).format(
        n=len(gpus), name=gpus[0].get("name") if gpus else ""
    )
    if not configs:
        return lead + _("pick what to compare under Device.")
    devices = {c["device"] for c in configs}
    if len(configs) == 1:
        return lead + _("one run on {device}; pick a comparison under Device.").format(
            device=_place(configs[0]["device"])
        )
    if changes.chained(list(configs)) and len(devices) == 1:  # the title names the changes
        return lead + _("one change at a time on {device}, each run against the one before.").format(
            device=_place(configs[0]["device"])
        )
    axis = axis_of(list(configs))
    field = AXES[axis].field if axis else "device"
    names = [_words(field, c.get(field), plain=True) for c in configs]
    listed = (
        names[0] if len(names) == 1 else _("{first} with {last}").format(first=", ".join(names[:-1]), last=names[-1])
    )
    if len(devices) != 1:
        return lead + _("comparing {listed}.").format(listed=listed)
    place = _place(next(iter(devices)))
    said = (
        _("comparing {listed}, both on {device}.") if len(configs) == 2 else _("comparing {listed}, all on {device}.")
    )
    return lead + said.format(listed=listed, device=place)


def _steps(configs: list[dict], plain: bool) -> list[str]:
    """A chain's first execution, then each change: 'plain fit', 'multi-step loop', 'XLA'."""
    said = [_words("execution", configs[0].get("execution"), plain)]
    for before, config in zip(configs, configs[1:], strict=False):
        (field,) = changes.differences(before, config)
        said.append(_words(field, config.get(field), plain) if field == "execution" else _setting(field, config))
    return said


def _setting(field: str, config: dict) -> str:
    if field == "xla":
        return "XLA" if config.get("xla") == "on" else _("no XLA")
    return f"{field} {config.get(field)}"


def check_failed(message: str) -> str:
    """core.machine.hardware_check's sentence for a failed hardware check, in the page's language."""
    return i18n.again(message, CHECK_FAILED)


# -- a watched run's settings ----------------------------------------------------------------------
def settings_words(config: dict) -> str:
    """'MLP (128 hidden units), Fashion-MNIST (30,000 training images), 6 epochs, batch 100, Adam at learning rate
    0.001, seed 0': the settings a run shares with the runs beside it, as a person reads them."""
    model = _(models.REGISTRY[config["model"]].label) if config.get("model") in models.REGISTRY else config.get("model")
    if config.get("model") == "mlp":
        model = _("{model} ({units} hidden units)").format(model=model, units=config.get("hidden_units"))
    data = _(datasets.REGISTRY[config["dataset"]].label) if config.get("dataset") in datasets.REGISTRY else "?"
    subset = config.get("train_subset")
    data = (_("{data} ({n:,} training images)") if subset else _("{data} (the whole training set)")).format(
        data=data, n=subset or 0
    )
    optimizer = {"sgd": "SGD", "adam": "Adam"}.get(config.get("optimizer"), config.get("optimizer"))
    return _(
        "{model}, {data}, {epochs} epochs, batch {batch}, {optimizer} at learning rate {lr:g}, seed {seed}, {precision}"
    ).format(
        model=model,
        data=data,
        epochs=config.get("epochs"),
        batch=config.get("batch_size"),
        optimizer=optimizer,
        lr=config.get("learning_rate"),
        seed=config.get("seed"),
        precision=config.get("precision", "float32"),
    )


def watched_ui(configs: Sequence[dict]) -> None:
    """Next to a watched run's charts: its settings, not this page's sidebar's (which its own Run would use)."""
    if configs:
        said = _("Another page's runs, with their settings: {settings}; {what}.")
        st.caption(said.format(settings=settings_words(configs[0]), what=what(configs)))


# -- the terms ---------------------------------------------------------------------------------------
def terms(text: str) -> list[tuple[str, str]]:
    """(term, note) for each term of TERMS that `text` uses, in TERMS' order."""
    return [(_(term), _(note)) for term, (used, note) in TERMS.items() if re.search(used, text, re.IGNORECASE)]


def terms_ui(text: str) -> None:
    """One plain-words line per term the headline and the labels use, for the audience."""
    if found := terms(text):
        st.caption("  \n".join(f"**{term}**: {note}" for term, note in found))
