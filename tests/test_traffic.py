"""Bytes moved per training sample (core.engine.traffic), worked by hand for softmax and mlp(128) at batch 100."""

from __future__ import annotations

import pytest

from core.engine import flops, models, traffic

BATCH = 100
F = 4  # bytes per float32


def test_softmax_moves_4158_bytes_per_sample_at_batch_100():
    # Per step: input 100 x 784 read; kernel + bias 784 x 10 + 10 = 7,850 read in forward (the first
    # layer: no input gradient, so no second read); its 10 outputs per sample written and read back;
    # the gradient written; SGD writes the new weights. Flatten is a view.
    weights = 784 * 10 + 10
    per_step = F * (BATCH * 784 + weights + 2 * BATCH * 10 + weights + weights)
    moved = traffic.count(models.build("softmax"))
    assert per_step == 415_800
    assert moved.bytes_per_sample(BATCH) == pytest.approx(per_step / BATCH) == pytest.approx(4_158)
    # Arithmetic intensity = training FLOPs / bytes.
    assert flops.count(models.build("softmax")).train / moved.bytes_per_sample(BATCH) == pytest.approx(31_380 / 4_158)


def test_mlp_128_moves_16504_bytes_per_sample_at_batch_100():
    hidden, output = 784 * 128 + 128, 128 * 10 + 10
    per_step = F * (
        BATCH * 784  # input
        + hidden
        + output  # forward reads both layers' weights
        + output  # backward reads the second layer's again for dL/dx (the first needs none)
        + 2 * BATCH * (128 + 10)  # both layers' outputs written and read back
        + hidden
        + output  # gradients written
        + hidden
        + output  # SGD writes the new weights
    )
    moved = traffic.count(models.build("mlp", 128))
    assert per_step == 1_650_400
    assert moved.bytes_per_sample(BATCH) == pytest.approx(16_504)
    # Weights amortise over the batch: at batch 1 they dominate, at a huge batch only input and activations are left.
    assert moved.bytes_per_sample(1) > 10 * moved.bytes_per_sample(BATCH)
    assert moved.bytes_per_sample(10**9) == pytest.approx(moved.per_sample, rel=1e-3)


def test_adam_writes_two_moments_besides_the_weights_and_every_layer_of_the_cnn_is_counted():
    sgd, adam = traffic.count(models.build("mlp", 128)), traffic.count(models.build("mlp", 128), "adam")
    assert adam.optimizer_per_step == 3 * sgd.optimizer_per_step and adam.per_sample == sgd.per_sample
    cnn = traffic.count(models.build("cnn"))
    assert cnn.activations_per_sample > 0 and cnn.per_step > 0
