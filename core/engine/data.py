"""Dataset registry: mnist, fashion_mnist and synthetic, as float32 images in [0, 1]."""

from __future__ import annotations

import gzip
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.language.i18n import N_, _

# Debian's and Ubuntu's `apt-get install dataset-fashion-mnist` puts the real files here.
DEBIAN_FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
TEST_SIZE = 10_000  # every dataset's test set: MNIST's and Fashion-MNIST's files, and the synthetic one made to match
# Synthetic samples a sweep keeps on the device; batches draw from them with replacement, so any batch
# size works and memory stays small (8,192 x 784 float32 = 25 MB).
SWEEP_POOL_SIZE = 8192
NUM_CLASSES = 10


class DatasetError(RuntimeError):
    """A dataset cannot be loaded here (offline and not cached, or a broken file)."""


@dataclass(frozen=True)
class Dataset:
    """Train and test arrays: images float32 (N, 28, 28) in [0, 1], labels int32 (N,)."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str

    def head(self, rows: int) -> Dataset:
        """The first `rows` training samples (from the first again where there are fewer) and one test sample: a
        throwaway copy's data (core.engine.profile, core.engine.trace)."""
        if rows <= len(self.x_train):
            x, y = self.x_train[:rows], self.y_train[:rows]
        else:
            picked = np.arange(rows) % len(self.x_train)
            x, y = self.x_train[picked], self.y_train[picked]
        return Dataset(self.name, x, y, self.x_test[:1], self.y_test[:1], self.source)


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str


def keras_datasets_dir() -> Path:
    """Where Keras caches downloads: $KERAS_HOME/datasets, else ~/.keras/datasets (as Keras decides)."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    if not os.access(home, os.W_OK) and not os.environ.get("KERAS_HOME"):
        home = os.path.join("/tmp", ".keras")
    return Path(home) / "datasets"


def _fashion_dir() -> Path | None:
    for folder in (keras_datasets_dir() / "fashion-mnist", DEBIAN_FASHION_DIR):
        if all((folder / f).is_file() for f in FASHION_FILES):
            return folder
    return None


def _read_idx(path: Path, offset: int) -> np.ndarray:
    # IDX files: a big-endian header (8 bytes for labels, 16 for images), then uint8 data.
    with gzip.open(path, "rb") as fh:
        return np.frombuffer(fh.read(), np.uint8, offset=offset)


def _scaled(name: str, xtr, ytr, xte, yte, source: str) -> Dataset:
    """uint8 images and labels as a Dataset: images scaled to [0, 1] in float32, (N, 28, 28), labels int32."""
    x_train = (xtr.astype(np.float32) / 255.0).reshape(-1, 28, 28)
    x_test = (xte.astype(np.float32) / 255.0).reshape(-1, 28, 28)
    return Dataset(name, x_train, ytr.astype(np.int32), x_test, yte.astype(np.int32), source)


def _from_keras(name: str, source: str) -> Dataset:
    """Keras' own loader of `name`, which downloads into its cache (and needs the internet)."""
    try:
        import keras

        # keras.datasets.mnist and keras.datasets.fashion_mnist: Keras names them as REGISTRY does.
        (xtr, ytr), (xte, yte) = getattr(keras.datasets, name).load_data()
    except Exception as err:  # noqa: BLE001 - any download failure means "not available"
        raise DatasetError(_offline_message(name, err)) from None
    return _scaled(name, xtr, ytr, xte, yte, source)


def _load_fashion(_: int | None, __: int) -> Dataset:
    folder = _fashion_dir()
    if folder is None:
        return _from_keras("fashion_mnist", "keras download")
    try:
        xtr = _read_idx(folder / FASHION_FILES[0], 16)
        ytr = _read_idx(folder / FASHION_FILES[1], 8)
        xte = _read_idx(folder / FASHION_FILES[2], 16)
        yte = _read_idx(folder / FASHION_FILES[3], 8)
    except (OSError, EOFError, ValueError) as err:
        raise DatasetError(f"The Fashion-MNIST files in {folder} cannot be read ({err}).") from None
    if xtr.size != len(ytr) * 784 or xte.size != len(yte) * 784:
        raise DatasetError(f"The Fashion-MNIST files in {folder} are truncated or mismatched.")
    return _scaled("fashion_mnist", xtr, ytr, xte, yte, str(folder))


def _load_mnist(_: int | None, __: int) -> Dataset:
    return _from_keras("mnist", "keras")


def synthetic_arrays(n_train: int, n_test: int, seed: int):
    """((x_train, y_train), (x_test, y_test)) of learnable, not trivial 28x28 images, deterministic per seed.

    Each class has three smooth patterns (modes) that share a common background, shifted by up to two
    pixels, dimmed and noisy: a softmax model lands in the mid 80s (like Fashion-MNIST), a CNN higher.
    Training and test images come from their own streams of the seed, so the test set is the same at any
    training size. Plain NumPy, so "Show code" can copy it into a script.
    """
    classes, modes, shift, noise = 10, 3, 2, 0.3
    rng = np.random.default_rng(seed)
    # Low-frequency patterns (7x7 blown up to 28x28), so neighbouring pixels agree as in real images; the
    # shared background makes the classes overlap.
    shared = rng.random((1, 1, 7, 7))
    own = rng.random((classes, modes, 7, 7))
    patterns = np.kron(0.3 * shared + 0.7 * own, np.ones((4, 4)))
    k = 2 * shift + 1
    shifted = np.empty((classes, modes, k, k, 28, 28), np.float32)
    for i in range(k):
        for j in range(k):
            shifted[:, :, i, j] = np.roll(patterns, (i - shift, j - shift), axis=(2, 3))

    def make(n: int, stream: int):
        r = np.random.default_rng([seed, stream])
        labels = r.integers(0, classes, n).astype(np.int32)
        images = shifted[labels, r.integers(0, modes, n), r.integers(0, k, n), r.integers(0, k, n)]
        images *= r.uniform(0.6, 1.0, (n, 1, 1)).astype(np.float32)
        images += r.normal(0.0, noise, (n, 28, 28)).astype(np.float32)
        return np.clip(images, 0.0, 1.0, out=images), labels

    return make(n_train, 1), make(n_test, 2)


def _load_synthetic(size: int | None, seed: int) -> Dataset:
    (xtr, ytr), (xte, yte) = synthetic_arrays(size or 60_000, TEST_SIZE, seed)
    return Dataset("synthetic", xtr, ytr, xte, yte, f"generated (seed {seed})")


def _available_fashion() -> Availability:
    folder = _fashion_dir()
    if folder is not None:
        return Availability(True, _("files in {folder}").format(folder=folder))
    return Availability(
        False,
        _("not downloaded: needs the internet once, or offline `apt-get install dataset-fashion-mnist`"),
    )


def _available_mnist() -> Availability:
    if (keras_datasets_dir() / "mnist.npz").is_file():
        return Availability(True, _("cached in {folder}").format(folder=keras_datasets_dir()))
    return Availability(False, _("not downloaded: needs the internet once (Keras fetches mnist.npz)"))


@dataclass(frozen=True)
class DatasetSpec:
    label: str
    load: Callable[[int | None, int], Dataset]
    availability: Callable[[], Availability]


REGISTRY: dict[str, DatasetSpec] = {
    "fashion_mnist": DatasetSpec("Fashion-MNIST", _load_fashion, _available_fashion),
    "mnist": DatasetSpec("MNIST", _load_mnist, _available_mnist),
    "synthetic": DatasetSpec(
        N_("Synthetic"), _load_synthetic, lambda: Availability(True, _("generated, always available"))
    ),
}


def availability(name: str) -> Availability:
    """Whether `name` can be loaded here without the internet, and why not."""
    return REGISTRY[name].availability()


# What Keras' loaders download into keras_datasets_dir(), in bytes. Keras writes each file in
# place as it arrives, so the bytes on disk over these totals is the download's progress.
DOWNLOAD_BYTES = {
    "fashion_mnist": {
        "fashion-mnist/train-images-idx3-ubyte.gz": 26_421_880,
        "fashion-mnist/train-labels-idx1-ubyte.gz": 29_515,
        "fashion-mnist/t10k-images-idx3-ubyte.gz": 4_422_102,
        "fashion-mnist/t10k-labels-idx1-ubyte.gz": 5_148,
    },
    "mnist": {"mnist.npz": 11_490_434},
}


def download_progress(name: str) -> tuple[int, int] | None:
    """(bytes in Keras' cache so far, bytes in all) for a dataset Keras downloads; None for generated ones."""
    files = DOWNLOAD_BYTES.get(name)
    if files is None:
        return None
    root = keras_datasets_dir()
    done = 0
    for rel, size in files.items():
        try:
            done += min((root / rel).stat().st_size, size)
        except OSError:
            pass
    return done, sum(files.values())


def _offline_message(name: str, err: Exception) -> str:
    ready = [n for n in REGISTRY if n != name and availability(n).available]
    return (
        f"Dataset {name} is not on this machine and could not be downloaded ({type(err).__name__}); "
        f"available here: {', '.join(ready)}."
    )


_cache: dict[tuple, Dataset] = {}
_cache_lock = threading.Lock()


def load(name: str, train_subset: int | None = None, seed: int = 0) -> Dataset:
    """Load a dataset once per process; a subset takes the first `train_subset` training samples."""
    if name not in REGISTRY:
        raise DatasetError(f"dataset must be one of {', '.join(REGISTRY)}, not {name!r}.")
    # Synthetic data is generated at the size asked for; real data is loaded whole and sliced.
    key = (name, train_subset, seed) if name == "synthetic" else (name,)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = REGISTRY[name].load(train_subset, seed)
        data = _cache[key]
    if train_subset and name != "synthetic":
        data = Dataset(
            name, data.x_train[:train_subset], data.y_train[:train_subset], data.x_test, data.y_test, data.source
        )
    return data


def test_images(name: str, indices: list[int], seed: int = 0) -> np.ndarray:
    """The test images at `indices` (e.g. Learned.indices) as uint8 (n, 28, 28); synthetic ones regenerated from the
    seed."""
    folder = _fashion_dir() if name == "fashion_mnist" else None
    if folder is not None:  # the test file alone, as stored: the page had loaded all 70,000 images (7 s, +220 MB)
        try:
            return _read_idx(folder / FASHION_FILES[2], 16).reshape(-1, 28, 28)[list(indices)].copy()
        except (OSError, EOFError, ValueError) as err:
            raise DatasetError(f"The Fashion-MNIST files in {folder} cannot be read ({err}).") from None
    # Synthetic test images do not depend on the training size: generate the smallest training set.
    data = load(name, 10 if name == "synthetic" else None, seed)
    return np.rint(data.x_test[list(indices)] * 255).astype(np.uint8)
