"""The dashboard's one-click settings (its preset buttons), as TrainConfig fields, and each one's device mode."""

PRESETS = {
    "The tutorial": {
        "dataset": "fashion_mnist",
        "model": "softmax",
        "optimizer": "sgd",
        "learning_rate": 0.1,
        "batch_size": 100,
        "epochs": 10,
        "seed": 0,
        "execution": "multi-step-loop",
        "train_subset": None,
        "hidden_units": 128,
        "precision": "float32",
        "xla": "auto",
    },
    # Six epochs of 30,000 images, not three of 60,000: five steady epochs steady the headline
    # (bench/headline_stability.py).
    "Quick demo": {
        "dataset": "fashion_mnist",
        "model": "mlp",
        "optimizer": "adam",
        "learning_rate": 0.001,
        "batch_size": 100,
        "epochs": 6,
        "seed": 0,
        "execution": "multi-step-loop",
        "train_subset": 30000,
        "hidden_units": 128,
        "precision": "float32",
        "xla": "auto",
    },
}
# Each preset's device mode: (with a GPU, without one). Without a GPU the Quick demo still compares two runs.
PRESET_MODES = {"The tutorial": ("cpu-vs-gpu", "cpu"), "Quick demo": ("cpu-vs-gpu", "fit:cpu")}
