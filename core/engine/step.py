"""The multi-step training step: many optimizer steps in one tf.function call, sized to about 0.2 s.

Shared by the multi-step-loop execution mode (core.engine.executions.loop) and the batch-size
sweep (core.engine.sweep), so both time the same step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.engine import kernels
from core.engine.job import Cancelled, StopCheck
from core.engine.tf_setup import tf

# One call runs many optimizer steps, sized so that a call lasts about this long: short enough
# to honour Stop within a second and to report progress, long enough that per-call overhead
# (Python, dispatch, the host-device sync) vanishes.
TARGET_CALL_SECONDS = 0.2
# A StepRunner asked for at least N calls per run cuts its calls down to this, never shorter. A call
# costs about 0.5 ms beyond its steps (dispatch, two host syncs; the MLP(128) on this 2-core CPU:
# 0.36 ms a step in 25-step calls, 0.34 in 100-step ones), about 2 % of a 30 ms call, while a
# short epoch still gives the speedup several steady-state measurements (core.analysis.compare.MIN_CALLS).
MIN_CALL_SECONDS = 0.03

# Hold each Dense kernel transposed while an XLA call trains it (core.engine.kernels); off only in bench/floor.py's row.
TRANSPOSED_KERNELS = True

# on_call(steps done in this run, time the call's results reached the host, loss sum so far, hits so far)
CallCallback = Callable[[int, float, float, float], None]


def build_train_chunk(model, optimizer, x, y, batch: int, jit_compile: bool):
    """train_chunk(order, start, count) -> (loss sum, hits): `count` optimizer steps in one call.

    Step i trains on the rows of x, y listed in order[(start + i) * batch : (start + i + 1) * batch].
    x, y and order should already be on the device; the optimizer is built here, unbuilt before, over the
    variables the steps train (core.engine.kernels: each Dense kernel held transposed during a call).
    With jit_compile, XLA compiles the whole call: the loop, the batch gathers and every step in one
    program, so a step costs no op dispatch at all (Keras' steps_per_execution compiles only the step
    and keeps a graph loop around it). `start` and `count` are run-time values of the loop (a gather's
    indices and a while loop's bound), so one compilation serves every call.
    """
    t = tf()
    import keras

    loss_fn = keras.losses.sparse_categorical_crossentropy
    # mixed_float16: LossScaleOptimizer scales the loss before the gradients and unscales them in apply().
    scale = getattr(optimizer, "scale_loss", lambda loss: loss)
    held = kernels.Held(model, jit_compile and TRANSPOSED_KERNELS and kernels.on_cpu(model))
    optimizer.build(held.trained)

    def train_step(xb, yb):
        with t.GradientTape() as tape:
            # A mixed policy computes in float16 or bfloat16; the loss and accuracy are taken in float32, as Keras does.
            probs = t.cast(held.call(xb), t.float32)
            loss = t.reduce_mean(loss_fn(yb, probs))
            scaled = scale(loss)
        grads = tape.gradient(scaled, held.trained)
        optimizer.apply(grads, held.trained)
        hits = t.equal(t.argmax(probs, axis=1, output_type=t.int32), yb)
        return loss, t.reduce_sum(t.cast(hits, t.float32))

    @t.function(jit_compile=jit_compile, reduce_retracing=True)
    def train_chunk(order, start, count):
        def body(i, loss_sum, correct):
            # A gather, not a slice: XLA takes a slice's begin as a compile-time constant, which would make
            # `start` one too and compile the program again for every call's start.
            idx = t.gather(order, (start + i) * batch + t.range(batch))
            loss, hits = train_step(t.gather(x, idx), t.gather(y, idx))
            return i + 1, loss_sum + loss, correct + hits

        held.take()
        # A plain while_loop, not autograph's `for i in tf.range(count)`: that one hands XLA its trip
        # count as a compile-time constant, so every new call size would compile the program again
        # (tests/test_precision_xla.py counts the programs XLA compiles).
        _, loss_sum, correct = t.while_loop(
            lambda i, *_: i < count, body, (t.constant(0), t.constant(0.0), t.constant(0.0))
        )
        held.give_back()
        return loss_sum, correct

    return train_chunk


@dataclass(frozen=True)
class StepTotals:
    """What `steps` optimizer steps did: summed batch losses, correct predictions, wall-clock seconds."""

    loss_sum: float
    hits: float
    seconds: float


class StepRunner:
    """Runs optimizer steps in calls of about TARGET_CALL_SECONDS, checking Stop between calls.

    `order` holds `batches` batches of row indices. A run starts at its first batch and walks on;
    one that needs more steps than `order` holds (the sweep's) starts over at the first batch.
    The call size adapts after every call and carries over from one run to the next. With min_calls,
    a run of `batches` steps takes at least that many calls (each still at least MIN_CALL_SECONDS long).
    A run's calls are of equal size: never a full call and a short remainder.
    """

    def __init__(self, train_chunk, batches: int, min_calls: int = 1):
        self._call, self._batches = train_chunk, batches
        self._most = max(1, math.ceil(batches / min_calls))
        self.chunk = 1  # steps in the next call; the first call traces the step
        self.per_step = math.inf  # seconds per step in the last call
        self.held: int | None = None  # a call size kept whatever the calls take (a throwaway copy of a run's step)

    def run(self, order, steps: int, should_stop: StopCheck, on_call: CallCallback | None = None) -> StepTotals:
        """Run `steps` steps over `order`; Cancelled if should_stop() says so between calls; on_call after each call."""
        t = tf()
        began = time.perf_counter()
        done, loss_sum, hits = 0, 0.0, 0.0
        while done < steps:
            if should_stop():
                raise Cancelled
            # The steps left, in equal calls of at most `chunk`: not one full call and a short remainder,
            # whose per-call overhead would weigh more in its step time.
            left = steps - done
            count = math.ceil(left / math.ceil(left / self.chunk))
            start = done % self._batches
            if start + count > self._batches:
                start = 0
            call_began = time.perf_counter()
            loss, correct = self._call(order, t.constant(start), t.constant(count))
            # .numpy() waits for the device to finish: the sync point that makes the time honest.
            loss_sum += float(loss.numpy())
            hits += float(correct.numpy())
            finished = time.perf_counter()
            self.per_step = max((finished - call_began) / count, 1e-7)
            shortest = int(MIN_CALL_SECONDS / self.per_step)
            adapted = max(1, min(self._batches, int(TARGET_CALL_SECONDS / self.per_step), max(self._most, shortest)))
            self.chunk = self.held or adapted
            done += count
            if on_call is not None:
                on_call(done, finished, loss_sum, hits)
        return StepTotals(loss_sum, hits, time.perf_counter() - began)
