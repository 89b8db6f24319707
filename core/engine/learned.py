"""What the model learned, for the audience: a seeded random strip of test images with the predicted labels, and the
softmax model's ten weight templates (the tutorial's classic picture). Taken at an epoch's end, untimed.
"""

from __future__ import annotations

import numpy as np

from core.results import Learned

STRIP_SIZE = 10  # one row under the charts at 1280x720 with the sidebar open (12 wrapped 11 + 1)


def strip_indices(labels: np.ndarray, seed: int = 0, size: int = STRIP_SIZE) -> list[int]:
    """Test-set rows for the strip: a random draw from the run's seed, so that wrong predictions show about as
    often as the accuracy says (the first image of each class, the easiest ones, read "12 right" at 84%).
    The same seed draws the same rows in every run of a comparison."""
    rows = np.random.default_rng(seed).choice(len(labels), size=min(size, len(labels)), replace=False)
    return sorted(int(i) for i in rows)


def templates(model, name: str) -> tuple[list[list[int]], float] | None:
    """The softmax model's 10 x 784 weights as 0..255 (128 = 0) and the |weight| that 0 and 255 stand for; None for
    other models."""
    if name != "softmax":
        return None
    weights = np.asarray(model.layers[-1].kernel.numpy(), dtype=np.float64).T  # (10, 784): one template per class
    big = float(np.finfo(np.float32).max)  # a diverged model's weights are finite in the file: JSON has no NaN
    weights = np.nan_to_num(weights, nan=0.0, posinf=big, neginf=-big)
    scale = float(np.abs(weights).max()) or 1.0
    scaled = np.clip(np.rint(127.5 + 127.5 * weights / scale), 0, 255).astype(np.int64)
    return scaled.tolist(), scale


def of_model(model, name: str, x_strip, indices: list[int], labels: list[int]) -> Learned:
    """Model `name`'s predictions on the strip (x_strip: those test images, on the model's device) and its templates."""
    predictions = np.argmax(np.asarray(model(x_strip, training=False)), axis=1).tolist()
    found = templates(model, name)
    return Learned(
        indices=list(indices),
        labels=list(labels),
        predictions=[int(p) for p in predictions],
        templates=found[0] if found else None,
        template_scale=found[1] if found else None,
    )
