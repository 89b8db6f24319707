"""What the model learned, small, under the charts: softmax's ten weight templates and a strip of predictions.

The templates are the tutorial's classic picture (each class's 784 weights as a 28x28 image: bright where
a pixel votes for the class). The strip is a fixed set of test images with the model's predicted label,
wrong ones framed in orange (the palette's vermilion). Images are numpy arrays (core.engine.data reads the test images
with numpy only), sent to the browser inline, as PNG data URLs: Streamlit's media store forgets a run's image files as
soon as the next epoch redraws them, so a browser slow to fetch one (a loaded laptop, a viewer's page) got a broken
image and an "Image source error" instead of the picture.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
import streamlit as st
from PIL import Image

from core.engine import data as datasets
from core.language.i18n import N_, _
from core.results import Learned, RunResult

CLASS_NAMES = {
    "fashion_mnist": (
        N_("T-shirt"),
        N_("Trouser"),
        N_("Pullover"),
        N_("Dress"),
        N_("Coat"),
        N_("Sandal"),
        N_("Shirt"),
        N_("Sneaker"),
        N_("Bag"),
        N_("Ankle boot"),
    ),
    "mnist": tuple(str(d) for d in range(10)),
}
WIDTH = 64  # pixels per picture: small, yet a projector still shows the shapes
WRONG = (213, 94, 0)  # the palette's vermilion, for a wrong prediction's frame
FRAME = 3  # pixels of frame, in the 28x28 image's own pixels before scaling


def class_name(dataset: str | None, label: int) -> str:
    """'Sneaker' for Fashion-MNIST's 7, '7' for MNIST, 'class 7' for the synthetic set."""
    names = CLASS_NAMES.get(dataset or "")
    return _(names[label]) if names and 0 <= label < len(names) else _("class {label}").format(label=label)


def latest(result: RunResult) -> Learned | None:
    """The last epoch's snapshot (a stored run keeps only the last; a live one has each epoch's)."""
    return next((e.learned for e in reversed(result.epochs) if e.learned is not None), None)


def templates(learned: Learned) -> list[np.ndarray]:
    """The ten templates as 28x28 uint8 images (128 = weight 0, brighter = votes for the class)."""
    return [np.asarray(t, np.uint8).reshape(28, 28) for t in learned.templates or ()]


def data_url(image: np.ndarray) -> str:
    """A uint8 grey or RGB image as a PNG data URL, which st.image shows as it is (no media file to go stale)."""
    out = io.BytesIO()
    Image.fromarray(np.asarray(image, np.uint8)).save(out, format="PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def framed(image: np.ndarray, wrong: bool) -> np.ndarray:
    """A grey image as RGB with a frame: orange when the prediction is wrong, white otherwise."""
    rgb = np.repeat(np.pad(image, FRAME, constant_values=255)[..., None], 3, axis=2)
    if wrong:
        rgb[:FRAME], rgb[-FRAME:], rgb[:, :FRAME], rgb[:, -FRAME:] = WRONG, WRONG, WRONG, WRONG
    return rgb


@st.cache_data(max_entries=8, show_spinner=False)
def strip_images(dataset: str, indices: tuple[int, ...], seed: int) -> np.ndarray:
    """The strip's test images, read once per dataset and strip."""
    return datasets.test_images(dataset, list(indices), seed)


def strip_ui(result: RunResult, learned: Learned) -> None:
    dataset = result.config.get("dataset")
    try:
        images = strip_images(dataset, tuple(learned.indices), int(result.config.get("seed") or 0))
    except (OSError, ValueError, KeyError) as err:  # an imported run's dataset may not be on this machine
        st.caption(
            _("The test images of {dataset} are not on this machine ({err}); predictions only.").format(
                dataset=dataset, err=err
            )
        )
        images = None
    pairs = list(zip(learned.labels, learned.predictions, strict=True))
    wrong = sum(p != t for t, p in pairs)
    said = _("Predictions on {n} test images: {right} right, {wrong} wrong (orange frame, ✗).")
    st.caption(said.format(n=len(pairs), right=len(pairs) - wrong, wrong=wrong))
    captions = [f"{class_name(dataset, p)}" + ("" if p == t else " ✗") for t, p in pairs]
    if images is not None:
        pictures = [data_url(framed(img, p != t)) for img, (t, p) in zip(images, pairs, strict=True)]
        st.image(pictures, caption=captions, width=WIDTH)


def templates_ui(result: RunResult, learned: Learned) -> None:
    dataset = result.config.get("dataset")
    said = _("The ten weight templates (bright: pixels that vote for the class), ±{scale:.2g}:")
    st.caption(said.format(scale=learned.template_scale))
    pictures = [data_url(t) for t in templates(learned)]
    st.image(pictures, caption=[class_name(dataset, i) for i in range(10)], width=WIDTH)


def learned_ui(results: Sequence[RunResult], labels: Sequence[str]) -> None:
    """Per run, in a tab of its own: its templates (softmax) and its strip of predictions, as of its last epoch."""
    shown = [(r, lb, got) for r, lb in zip(results, labels, strict=True) if (got := latest(r)) is not None]
    if not shown:
        return
    st.markdown(_("**What the model learned**"))
    for tab, (result, _label, got) in zip(st.tabs([lb for _r, lb, _g in shown]), shown, strict=True):
        with tab:
            if got.templates:
                templates_ui(result, got)
            strip_ui(result, got)
