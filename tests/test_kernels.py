"""The multi-step call's held kernels (core.engine.kernels): transposed under XLA, the same training as Keras'
layout."""

from __future__ import annotations

import keras
import numpy as np

from core.engine import models, step
from core.engine.step import build_train_chunk
from core.engine.tf_setup import tf


def _trained(transposed: bool, jit_compile: bool):
    """The MLP's variables, its Adam slot shapes and the summed loss after 12 steps, held as asked."""
    t = tf()
    keras.utils.set_random_seed(5)
    model = models.build("mlp", 16)
    optimizer = keras.optimizers.Adam(0.01)
    rng = np.random.default_rng(0)
    x = t.constant(rng.random((120, 28, 28), np.float32))
    y = t.constant(rng.integers(0, 10, 120).astype(np.int32))
    saved, step.TRANSPOSED_KERNELS = step.TRANSPOSED_KERNELS, transposed
    try:
        chunk = build_train_chunk(model, optimizer, x, y, 20, jit_compile)
    finally:
        step.TRANSPOSED_KERNELS = saved
    order = t.constant(rng.permutation(120).astype(np.int32))
    losses = [float(chunk(order, t.constant(start), t.constant(3))[0].numpy()) for start in (0, 3, 1, 2)]
    slots = {tuple(v.shape) for v in optimizer.variables if len(v.shape) == 2}
    return [v.numpy() for v in model.trainable_variables], slots, losses


def test_an_xla_call_trains_transposed_kernels_and_gives_the_model_what_keras_layout_gives():
    held, held_slots, held_losses = _trained(True, True)
    kept, kept_slots, kept_losses = _trained(False, True)
    # Adam's slots belong to what the optimizer trains: (units, inputs) when held, Keras' (inputs, units) when not.
    assert held_slots == {(16, 784), (10, 16)} and kept_slots == {(784, 16), (16, 10)}
    # The model's own kernels keep Keras' shapes and come back trained as the untransposed steps train them.
    assert [v.shape for v in held] == [v.shape for v in kept]
    for a, b in zip(held, kept, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(held_losses, kept_losses, rtol=1e-4)


def test_without_xla_the_kernels_stay_as_keras_stores_them():
    # Without XLA the transposes would be ops of their own each step (slower: 0.237 against 0.180 s an epoch).
    _, slots, _ = _trained(True, False)
    assert slots == {(784, 16), (16, 10)}
