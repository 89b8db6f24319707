"""multi-step-loop: many optimizer steps in one tf.function call, over data copied to the device once."""

from __future__ import annotations

from core.engine import data as datasets
from core.engine.executions.base import Execution, make_optimizer
from core.engine.job import Cancelled, StopCheck
from core.engine.step import StepRunner, build_train_chunk
from core.engine.tf_setup import tf
from core.settings.config import TrainConfig

EVAL_BATCH = 1000
# Calls per epoch at least (each still at least MIN_CALL_SECONDS): a short epoch still gives the race a
# few points and the speedup a few steady-state measurements.
MIN_CALLS_PER_EPOCH = 4


class MultiStepLoop(Execution):
    """The shared multi-step step (core.engine.step), calls of about 0.2 s; what was called "fast"."""

    name = "multi-step-loop"

    def __init__(self, config: TrainConfig, model, data: datasets.Dataset, jit_compile: bool):
        super().__init__(config, model, data, jit_compile)
        t = tf()
        import keras

        optimizer = make_optimizer(config)
        # Copy the data to the device once; each step gathers its batch there.
        x, y = t.constant(data.x_train), t.constant(data.y_train)
        self._x_test, self._y_test = t.constant(data.x_test), t.constant(data.y_test)
        self._runner = StepRunner(
            build_train_chunk(model, optimizer, x, y, config.batch_size, jit_compile), self.steps, MIN_CALLS_PER_EPOCH
        )
        self._order = None
        loss_fn = keras.losses.sparse_categorical_crossentropy

        @t.function(jit_compile=jit_compile, reduce_retracing=True)
        def eval_chunk(xb, yb):
            probs = t.cast(model(xb, training=False), t.float32)  # a mixed policy's output, read in float32
            loss = t.reduce_sum(loss_fn(yb, probs))
            hits = t.equal(t.argmax(probs, axis=1, output_type=t.int32), yb)
            return loss, t.reduce_sum(t.cast(hits, t.float32))

        self._eval_chunk = eval_chunk

    def calls_like(self, other: Execution) -> None:
        self._runner.chunk = self._runner.held = other._runner.chunk

    def call_steps(self) -> int:
        return self._runner.chunk

    def prepare_epoch(self) -> None:
        # The order goes to the device here, before the clock starts; the gathers run inside the step.
        self._order = tf().constant(self.epoch_order())

    def train_epoch(self, should_stop: StopCheck) -> tuple[float, float]:
        self.marks = []
        batch = self.config.batch_size

        def mark(done: int, finished: float, loss_sum: float, hits: float) -> None:
            # `finished` is taken after the call's results were fetched: the device had done the work.
            self.marks.append((finished, done, loss_sum / done, hits / (done * batch)))

        totals = self._runner.run(self._order, self.steps, should_stop, mark)
        return totals.loss_sum / self.steps, totals.hits / self.samples_per_epoch

    def evaluate(self, should_stop: StopCheck) -> tuple[float, float]:
        n_test = len(self.data.x_test)
        loss_sum, correct = 0.0, 0.0
        for start in range(0, n_test, EVAL_BATCH):
            if should_stop():
                raise Cancelled
            loss, hits = self._eval_chunk(
                self._x_test[start : start + EVAL_BATCH], self._y_test[start : start + EVAL_BATCH]
            )
            loss_sum += float(loss.numpy())
            correct += float(hits.numpy())
        return loss_sum / n_test, correct / n_test
