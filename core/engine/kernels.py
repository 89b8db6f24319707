"""The variables a multi-step call trains: each Dense kernel held transposed, (units, inputs), while the call runs.

XLA's CPU dot is slow at the kernel gradient a Dense layer's autodiff asks for, x^T g, written into a (784, 10)
kernel: 59 µs at the tutorial's shapes, against 14 µs for the same product written as a (10, 784) one
(bench/floor.py's kernel row measures the epoch both ways). So a call copies each kernel into a transposed
variable, trains that one through Keras' stateless_call (the layer reads its transpose, so it computes as it
always does), and writes the kernel back at the call's end. The model's variables are the truth between calls;
the optimizer's slots belong to the held copies, which persist from call to call. Only where XLA compiles the call:
the tutorial's epoch took 0.061 s held against 0.093 s as Keras stores it with XLA, but without XLA each step's
transposes are ops of their own and it took 0.237 s against 0.180 s. Only on a CPU: a GPU's dots are unmeasured here.
"""

from __future__ import annotations

from core.engine.tf_setup import tf


def on_cpu(model) -> bool:
    """Whether the model's variables live on a CPU: the only device the held layout was measured on."""
    return all("CPU" in v.value.device.upper() for v in model.trainable_variables)


class Held:
    """`trained`: the variables the optimizer updates, in model.trainable_variables' order, a held copy per kernel."""

    def __init__(self, model, transposed: bool = True):
        import keras

        self.model = model
        kernels = {id(layer.kernel) for layer in model.layers if isinstance(layer, keras.layers.Dense)}
        self._flipped = [transposed and id(v) in kernels for v in model.trainable_variables]
        self.trained = [
            keras.Variable(tf().transpose(v.value), dtype=v.dtype, trainable=True, name=f"{v.name}_t") if flip else v
            for v, flip in zip(model.trainable_variables, self._flipped, strict=True)
        ]

    def _pairs(self):
        return [
            (v, h)
            for v, h, flip in zip(self.model.trainable_variables, self.trained, self._flipped, strict=True)
            if flip
        ]

    def take(self) -> None:
        """Copy the model's kernels into the held variables (inside the call: a cheap transpose each)."""
        for v, h in self._pairs():
            h.assign(tf().transpose(v.value))

    def give_back(self) -> None:
        """Write the held variables back into the model's kernels."""
        for v, h in self._pairs():
            v.assign(tf().transpose(h.value))

    def call(self, xb):
        """The model's training-mode output with the held variables' values in its weights."""
        t = tf()
        values = [
            t.transpose(h.value) if flip else h.value for h, flip in zip(self.trained, self._flipped, strict=True)
        ]
        fixed = [v.value for v in self.model.non_trainable_variables]
        out, updated = self.model.stateless_call(values, fixed, xb, training=True)
        for v, new in zip(self.model.non_trainable_variables, updated, strict=True):
            v.assign(new)
        return out
