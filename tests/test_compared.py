"""ui.compared: the title, the no-GPU sentence, a watched run's settings and the terms' notes, in words."""

from __future__ import annotations

from core.machine import hardware_check
from core.settings.config import TrainConfig
from core.settings.presets import PRESETS
from ui import compared

NO_GPU = hardware_check.Hardware(hardware_check.READY, host={"gpus": []})
ONE_GPU = hardware_check.Hardware(hardware_check.READY, host={"gpus": [{"index": 0, "name": "NVIDIA H100"}]})


def configs(*overrides: dict) -> list[dict]:
    return [TrainConfig(**{**PRESETS["Quick demo"], "train_subset": 30000, **o}).to_dict() for o in overrides]


FIT_VS_LOOP = configs({"execution": "keras-fit"}, {"execution": "multi-step-loop"})
STEPS = configs(
    *(
        {"execution": e, "xla": x}
        for e, x in [("keras-fit", "off"), ("multi-step-loop", "off"), ("multi-step-loop", "on")]
    )
)


def test_the_title_follows_the_comparison():
    assert compared.title(FIT_VS_LOOP) == "TensorFlow: plain fit vs multi-step loop on the CPU, live"
    # One change at a time (the Quick demo without a GPU): each step named in order.
    assert compared.title(STEPS) == "TensorFlow: plain fit → multi-step loop → XLA, live"
    assert compared.sentence(STEPS, NO_GPU) == (
        "**No GPU on this machine**: one change at a time on the CPU, each run against the one before."
    )
    # Two changes between neighbours is no chain: the runs are then listed, not stepped.
    assert "one change at a time" not in compared.sentence([STEPS[0], STEPS[2], STEPS[1]], NO_GPU)
    assert compared.title(configs({"device": "cpu"}, {"device": "gpu:0"})) == "TensorFlow: CPU vs GPU:0, live"
    along = configs({"precision": "float32"}, {"precision": "mixed_bfloat16"})
    assert compared.title(along) == "TensorFlow: float32 vs mixed_bfloat16 on the CPU, live"
    assert compared.title(configs({})) == "TensorFlow training on the CPU, live"
    assert compared.title([]) == compared.DASHBOARD


def test_the_main_area_says_there_is_no_gpu_and_what_is_compared_instead():
    assert compared.sentence(FIT_VS_LOOP, NO_GPU) == (
        "**No GPU on this machine**: comparing plain Keras fit with the multi-step loop, both on the CPU."
    )
    assert compared.sentence(FIT_VS_LOOP, hardware_check.Hardware(hardware_check.CHECKING)).startswith(
        "Checking for GPUs…"
    )
    assert compared.sentence(configs({"device": "cpu"}, {"device": "gpu:0"}), ONE_GPU) == (
        "**1 GPU here (NVIDIA H100)**: comparing CPU with GPU:0."
    )
    three = configs(*({"execution": e} for e in ("keras-fit", "keras-fit-spe", "multi-step-loop")))
    assert compared.sentence(three, NO_GPU).endswith(
        "comparing plain Keras fit, Keras fit with steps_per_execution with the multi-step loop, all on the CPU."
    )


def test_a_watched_run_is_described_by_its_own_settings():
    assert compared.settings_words(FIT_VS_LOOP[0]) == (
        "MLP (128 hidden units), Fashion-MNIST (30,000 training images), 6 epochs, batch 100, Adam at learning rate "
        "0.001, seed 0, float32"
    )


def test_each_term_the_headline_uses_gets_one_note():
    words = "CPU (multi-step loop, XLA) is 6.1× faster than CPU (plain fit) (5.6-6.8 over 302 calls after epoch 1)"
    assert [t for t, _ in compared.terms(words)] == ["Warm-up", "Step", "Plain fit", "Multi-step loop", "XLA", "Calls"]
    assert [t for t, _ in compared.terms("1.3× more samples/s per step")] == ["Step", "Samples/s"]
    assert all("\n" not in note and note.endswith(".") for _, (_, note) in compared.TERMS.items())


def test_a_share_of_peak_is_said_to_two_significant_figures():
    from ui.tables import share_words

    # The peak is measured to no better than that: 79.52% read as if it were known to four figures.
    assert [share_words(s) for s in (0.7952, 0.0431, 0.00523, 1.234)] == ["80%", "4.3%", "0.52%", "123%"]
