"""What the model learned, for the audience: a fixed strip of test images with the predicted labels, and the
softmax model's ten weight templates (the tutorial's classic picture). Taken at an epoch's end, untimed.
"""

from __future__ import annotations

import numpy as np

from core.results import Learned

STRIP_SIZE = 12


def strip_indices(labels: np.ndarray, size: int = STRIP_SIZE) -> list[int]:
    """Test-set rows for the strip: the first image of each class in turn, then each class's second, and so on."""
    by_class = [np.flatnonzero(labels == c).tolist() for c in sorted(set(labels.tolist()))]
    picked: list[int] = []
    depth = 0
    while len(picked) < min(size, len(labels)):
        picked += [rows[depth] for rows in by_class if depth < len(rows)][: size - len(picked)]
        depth += 1
    return picked


def templates(model, name: str) -> tuple[list[list[int]], float] | None:
    """The softmax model's 10 x 784 weights as 0..255 (128 = 0) and the |weight| that 0 and 255 stand for; None for other models."""
    if name != "softmax":
        return None
    weights = np.asarray(model.layers[-1].kernel.numpy(), dtype=np.float64).T  # (10, 784): one template per class
    big = float(np.finfo(np.float32).max)  # a diverged model's weights are finite in the file: JSON has no NaN
    weights = np.nan_to_num(weights, nan=0.0, posinf=big, neginf=-big)
    scale = float(np.abs(weights).max()) or 1.0
    scaled = np.clip(np.rint(127.5 + 127.5 * weights / scale), 0, 255).astype(np.int64)
    return scaled.tolist(), scale


def snapshot(model, name: str, x_strip, indices: list[int], labels: list[int]) -> Learned:
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
