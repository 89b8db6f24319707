"""Datasets: scaled to [0, 1], loaded once, synthetic deterministic, offline errors in one sentence."""

import numpy as np

from core.engine import data
from core.engine.training import train
from core.settings.config import TrainConfig
from tests.conftest import run_cli


def test_fashion_mnist_is_the_real_dataset(fashion_mnist):
    d = fashion_mnist
    assert d.x_train.shape == (60_000, 28, 28) and d.x_test.shape == (10_000, 28, 28)
    assert d.x_train.dtype == np.float32 and d.y_train.dtype == np.int32
    assert 0.0 <= d.x_train.min() and d.x_train.max() == 1.0
    assert sorted(np.unique(d.y_train)) == list(range(10))
    # Fashion-MNIST is balanced: 6,000 training images per class.
    assert set(np.bincount(d.y_train)) == {6000}
    assert data.load("fashion_mnist") is d  # loaded once per process


def test_subset_takes_the_first_samples(fashion_mnist):
    d = data.load("fashion_mnist", train_subset=123)
    assert len(d.x_train) == 123 and np.array_equal(d.y_train, fashion_mnist.y_train[:123])


def test_synthetic_is_deterministic_per_seed_and_sized():
    a = data.load("synthetic", 500, seed=1)
    b = data.REGISTRY["synthetic"].load(500, 1)
    c = data.load("synthetic", 500, seed=2)
    assert a.x_train.shape == (500, 28, 28) and len(a.y_test) == data.TEST_SIZE
    assert np.array_equal(a.x_train, b.x_train) and not np.array_equal(a.x_train, c.x_train)
    assert 0.0 <= a.x_train.min() and a.x_train.max() <= 1.0


def test_synthetic_is_learnable_but_not_trivial():
    # The tutorial's softmax model lands well short of 100 %, as on real data, and far above guessing (10 %).
    result = train(TrainConfig(dataset="synthetic", train_subset=20_000, epochs=3, seed=0), measurements=False)
    assert result.status == "completed", result.error
    assert 0.70 < result.final_test_accuracy() < 0.92
    # Its test set is the same at any training size, so a strip of test images is found by index alone.
    assert np.array_equal(data.load("synthetic", 10, seed=0).x_test, data.load("synthetic", 20_000, seed=0).x_test)
    strip = data.test_images("synthetic", [3, 1], seed=0)
    assert strip.dtype == np.uint8 and np.array_equal(strip, np.rint(data.load("synthetic", 10).x_test[[3, 1]] * 255))


def test_mnist_offline_without_cache_is_one_clear_sentence(tmp_path):
    # KERAS_HOME is read once, when keras is imported: set it for a fresh process.
    proc = run_cli(
        "train", "--dataset", "mnist", "--epochs", "1", env={"KERAS_HOME": str(tmp_path), "HOME": str(tmp_path)}
    )
    if (tmp_path / "datasets" / "mnist.npz").exists():  # this machine has the internet after all
        assert proc.returncode == 0
        return
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "Dataset mnist is not on this machine" in lines[0] and "synthetic" in lines[0]


def test_availability_says_why():
    assert data.availability("synthetic").available
    mnist = data.availability("mnist")
    assert mnist.reason
    assert data.availability("fashion_mnist").reason
