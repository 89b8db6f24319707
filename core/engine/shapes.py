"""The arithmetic rate a device reaches at a model's own layer shapes: its matmuls and convolutions, timed alone.

A square 1024x1024 matmul is the best case (core.engine.peak); the tutorial's step multiplies a 100x784 batch by
a 784x10 kernel, which reaches a fraction of that. So the compute part of an epoch (core.analysis.why) is its samples at
the seconds per sample measured here: every weighted layer's forward product and both halves of its backward one
(the kernel's gradient, and the input's where an earlier layer has weights, as core.engine.flops counts them),
in the run's compute dtype, in one tf.function, many times over, the fastest of a few tries, at the same two
batch sizes as core.engine.profile; the slope between them is what a sample adds. Nothing else of the step
(activations, the loss, the optimizer) is in it: that is per-sample work of another kind.
"""

from __future__ import annotations

import math
import threading
import time

from core.engine.tf_setup import tf

TRIES = 4  # the fastest counts: anything else on the machine only ever slows it
TRY_SECONDS = 0.025  # each try runs the larger batch's products about this long
MOST_REPEATS = 10_000

_cache: dict[tuple, float] = {}
_lock = threading.Lock()


def _products(model, batch: int):
    """(layer type, input shape with batch, kernel, layer, needs the input's gradient) per weighted layer, in order."""
    shape, found, weights_before = (batch, *tuple(model.inputs[0].shape)[1:]), [], False
    for layer in model.layers:
        out = (batch, *tuple(layer.compute_output_shape(shape))[1:])
        layer_type = type(layer).__name__
        if layer_type in PRODUCTS:
            found.append((layer_type, tuple(int(d) for d in shape), tuple(layer.kernel.shape), layer, weights_before))
        weights_before = weights_before or bool(layer.trainable_weights)
        shape = out
    return found


def _dense(t, x, kernel, layer):
    rows = x if len(x.shape) == 2 else t.reshape(x, (-1, x.shape[-1]))
    return t.linalg.matmul(rows, kernel)


def _conv2d(t, x, kernel, layer):
    return t.nn.conv2d(x, kernel, strides=layer.strides, padding=layer.padding.upper(), dilations=layer.dilation_rate)


# Layer class -> its product, as core.engine.flops counts it (a layer with weights and no entry here: no rate).
PRODUCTS = {"Dense": _dense, "Conv2D": _conv2d}


def product_flops(model, batch: int) -> float:
    """FLOPs of one step's products at `batch`: 2 per multiply-add, forward, kernel gradient, input gradient."""
    total = 0.0
    for _, shape, kernel, layer, needs_dx in _products(model, batch):
        out = (batch, *tuple(layer.compute_output_shape(shape))[1:])
        per_output = math.prod(kernel[:-1])  # Dense (in, units): in; Conv2D (kh, kw, in / groups, filters)
        macs = math.prod(out) * per_output
        total += 2 * macs * (3 if needs_dx else 2)
    return total


def measure(model, batches: tuple[int, int], tf_device: str, dtype: str = "float32") -> float | None:
    """Seconds per training sample of the model's products, at its shapes between two batch sizes; once per process.

    The slope of the products' time against the batch: what each sample adds, the products' launches (a fixed cost
    per step, in core.engine.profile's figure) left out. None where it came out negative (a noisy machine).
    """
    low, high = sorted(batches)
    key = (tf_device, dtype, low, high, tuple((k, s[1:], kern) for k, s, kern, _, _ in _products(model, 1)))
    with _lock:
        if key not in _cache:
            _cache[key] = benchmark(model, (low, high), tf_device, dtype)
        return _cache[key]


def measure_or_none(model, batches: tuple[int, int], tf_device: str, dtype: str = "float32") -> float | None:
    """measure(), or None where it fails or the model has a layer with weights and no product here."""
    try:
        weighted = [layer for layer in model.layers if layer.trainable_weights]
        if len(set(batches)) < 2 or any(type(layer).__name__ not in PRODUCTS for layer in weighted):
            return None
        return measure(model, batches, tf_device, dtype)
    except Exception:  # noqa: BLE001 - the why is a bonus: a failed measurement never fails the run
        return None


def benchmark(model, batches: tuple[int, int], tf_device: str, dtype: str = "float32") -> float | None:
    """Time the products at both batch sizes now, uncached: one trace serves both (the batch axis is left open)."""
    t = tf()
    products = _products(model, 1)
    with t.device(tf_device):
        kernels = [t.cast(t.random.uniform(kernel), dtype) for _, _, kernel, _, _ in products]
        signature = [t.TensorSpec((None, *shape[1:]), dtype) for _, shape, _, _, _ in products]

        @t.function(input_signature=[signature, t.TensorSpec((), t.int32)])
        def run(xs, repeats):
            def body(i, acc):
                total = acc
                for (layer_type, _, _, layer, needs_dx), x, kernel in zip(products, xs, kernels, strict=True):
                    with t.GradientTape() as tape:
                        tape.watch([x, kernel])
                        y = PRODUCTS[layer_type](t, x, kernel, layer)
                    grads = tape.gradient(y, [kernel, x] if needs_dx else [kernel], output_gradients=t.ones_like(y))
                    # One element of each result keeps every product alive (none is pruned), at no cost.
                    total += t.cast(t.reshape(y, [-1])[0], t.float32)
                    total += sum(t.cast(t.reshape(g, [-1])[0], t.float32) for g in grads)
                return i + 1, total

            return t.while_loop(lambda i, _: i < repeats, body, (t.constant(0), t.constant(0.0)))[1]

        def timer(batch: int):
            xs = [t.cast(t.random.uniform((batch, *shape[1:])), dtype) for _, shape, _, _, _ in products]

            def timed(repeats: int) -> float:
                began = time.perf_counter()
                float(run(xs, t.constant(repeats)).numpy())  # waits for the device
                return time.perf_counter() - began

            return timed

        timers = [timer(b) for b in batches]
        timers[0](1)  # the first call traces
        repeats = max(1, min(MOST_REPEATS, round(TRY_SECONDS / max(timers[-1](1), 1e-7))))
        best = [math.inf, math.inf]
        for _ in range(TRIES):  # the two batch sizes take turns, so the machine's noise hits both alike
            for i, timed in enumerate(timers):
                best[i] = min(best[i], timed(repeats) / repeats)
        low, high = batches
        slope = (best[1] - best[0]) / (high - low)
    return slope if slope > 0 else None


def rate(model, sample_seconds: float | None) -> float | None:
    """GFLOP/s the products reach at these shapes: their FLOPs per sample over their seconds per sample."""
    return product_flops(model, 1) / sample_seconds / 1e9 if sample_seconds else None
