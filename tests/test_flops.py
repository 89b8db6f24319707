"""FLOPs per sample, worked by hand and checked against TensorFlow's own profiler; the matmul peak."""

import pytest

from core.engine import flops, models, peak
from core.engine.tf_setup import tf

# Hand arithmetic, per sample. A multiply-add is 2 FLOPs, a bias add 1 FLOP per output element.
# Backward = weight gradient (same matmul/conv again, plus the bias-gradient sum) and input
# gradient (same matmul/conv again) except for the first weighted layer, whose input is data.

# softmax: Dense 784 -> 10.
SOFTMAX_FWD = 2 * 784 * 10 + 10  # 15,690
SOFTMAX_BWD = 2 * 784 * 10 + 10  # 15,690: dW and db only
SOFTMAX = SOFTMAX_FWD + SOFTMAX_BWD  # 31,380


def mlp_by_hand(h: int) -> tuple[int, int]:
    fwd = (2 * 784 * h + h) + (2 * h * 10 + 10)
    bwd = (2 * 784 * h + h) + (2 * h * 10 + 10) + 2 * h * 10  # the 2nd layer also passes dL/dx back
    return fwd, bwd


# cnn: 28x28x1 -conv3x3-> 26x26x32 -pool-> 13x13x32 -conv3x3-> 11x11x64 -pool-> 5x5x64 = 1600 -> 10.
CONV1_MACS = 26 * 26 * 32 * (3 * 3 * 1)  # 194,688
CONV2_MACS = 11 * 11 * 64 * (3 * 3 * 32)  # 2,230,272
DENSE_MACS = 1600 * 10
CNN_FWD = (2 * CONV1_MACS + 26 * 26 * 32) + (2 * CONV2_MACS + 11 * 11 * 64) + (2 * DENSE_MACS + 10)  # 4,911,306
CONV1_BWD = 2 * CONV1_MACS + 26 * 26 * 32  # dW, db; no dL/dx (its input is the image)
CONV2_BWD = (2 * CONV2_MACS + 11 * 11 * 64) + 2 * CONV2_MACS  # dW, db and dL/dx
DENSE_BWD = (2 * DENSE_MACS + 10) + 2 * DENSE_MACS  # dW, db and dL/dx
CNN_BWD = CONV1_BWD + CONV2_BWD + DENSE_BWD  # 9,403,850


@pytest.mark.parametrize(
    ("name", "hidden", "forward", "backward"),
    [
        ("softmax", 128, SOFTMAX_FWD, SOFTMAX_BWD),
        ("mlp", 128, *mlp_by_hand(128)),
        ("mlp", 1024, *mlp_by_hand(1024)),
        ("cnn", 128, CNN_FWD, CNN_BWD),
    ],
)
def test_flops_per_sample_by_hand(name, hidden, forward, backward):
    counted = models.flops_per_sample(name, hidden)
    assert (counted.forward, counted.backward) == (forward, backward)
    assert counted.train == forward + backward


def test_hand_totals_are_the_figures_quoted_elsewhere():
    # core/flops.py's docstring and the sweep report quote these; a changed convention shows here.
    assert SOFTMAX == 31_380
    assert sum(mlp_by_hand(128)) == 409_364
    assert CNN_FWD + CNN_BWD == 14_315_156


def test_backward_is_twice_forward_except_the_first_layer():
    by_layer = {layer.layer_type: layer for layer in models.flops_per_sample("mlp", 64).layers}
    assert by_layer["Flatten"].train == 0
    dense = [layer for layer in models.flops_per_sample("mlp", 64).layers if layer.layer_type == "Dense"]
    assert dense[0].backward_inputs == 0 and dense[0].backward_weights == dense[0].forward
    # Bias gradient and bias add are the same size; the input gradient has no bias term.
    assert dense[1].backward_weights + dense[1].backward_inputs == 2 * dense[1].forward - 10


def _profiled_flops(graph, op_types: set[str]) -> int:
    """FLOPs TensorFlow's own profiler counts for ops of the given types in a graph."""
    t = tf()
    opts = t.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    opts["output"] = "none"
    profile = t.compat.v1.profiler.profile(graph=graph, options=opts)
    return sum(c.total_float_ops for c in profile.children if graph.get_operation_by_name(c.name).type in op_types)


@pytest.mark.parametrize("name", ["softmax", "mlp", "cnn"])
def test_forward_matches_tensorflows_profiler(name):
    # A trusted reference: tf.profiler's FLOP registry for MatMul, Conv2D and BiasAdd.
    t = tf()
    model = models.build(name, 96)

    @t.function(autograph=False)
    def forward(x):
        return model(x)

    graph = forward.get_concrete_function(t.TensorSpec((1, 28, 28), t.float32)).graph
    assert _profiled_flops(graph, {"MatMul", "Conv2D", "BiasAdd"}) == flops.count(model).forward


@pytest.mark.parametrize("name", ["softmax", "mlp"])
def test_dense_training_matmuls_match_the_profiler(name):
    # The gradient graph TensorFlow builds: its matmuls are exactly our forward + backward
    # multiply-adds, which shows that the first layer's dL/dx is never computed.
    import keras

    t = tf()
    model = models.build(name, 96)

    @t.function(autograph=False)
    def step(x, y):
        with t.GradientTape() as tape:
            loss = t.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, model(x, training=True)))
        return tape.gradient(loss, model.trainable_variables)

    graph = step.get_concrete_function(t.TensorSpec((1, 28, 28), t.float32), t.TensorSpec((1,), t.int32)).graph
    counted = flops.count(model)
    biases = sum(2 * layer.units for layer in model.layers if hasattr(layer, "units"))  # bias add + bias grad
    assert _profiled_flops(graph, {"MatMul"}) == counted.train - biases


def test_a_layer_without_a_counter_is_an_error():
    import keras

    model = keras.Sequential([keras.Input((8,)), keras.layers.LayerNormalization()])
    with pytest.raises(flops.UncountedLayerError, match="LayerNormalization"):
        flops.count(model)


def test_peak_is_measured_once_and_is_plausible():
    first = peak.measure("/CPU:0")
    assert peak.measure("/CPU:0") is first  # cached for the process
    # Any CPU that runs TensorFlow does above 1 GFLOP/s; none of its cores does 10 TFLOP/s.
    assert 1 < first.gflops < 10_000
    assert first.seconds < 5
    assert peak.utilisation(first.gflops / 4, first) == pytest.approx(0.25)
    assert peak.utilisation(None, first) is None


def test_training_reports_achieved_gflops_and_the_devices_peak():
    from core.engine import limits
    from core.engine.training import train
    from core.settings.config import TrainConfig

    result = train(TrainConfig(dataset="synthetic", train_subset=600, batch_size=50, epochs=2, model="mlp"))
    assert result.status == "completed", result.error
    assert result.device["train_flops_per_sample"] == sum(mlp_by_hand(128))
    # The figure every run of this process (or of the server, where one shares its own) is held against.
    shared = limits.shared("/CPU:0", wait=0)
    expected_peak = shared["peak_gflops"] if shared else peak.measure("/CPU:0").gflops
    assert result.measured.limits.peak_gflops == pytest.approx(expected_peak)
    assert result.measured.limits.peak_source == ("server" if shared else "process")
    for epoch in result.epochs:
        expected = sum(mlp_by_hand(128)) * epoch.samples_per_second / 1e9
        assert epoch.gflops_per_second == pytest.approx(expected)
        assert 0 < epoch.gflops_per_second
