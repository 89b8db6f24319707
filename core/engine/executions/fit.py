"""keras-fit and keras-fit-spe: model.compile + model.fit + model.evaluate, as most Keras code is written.

keras-fit-spe differs only in compile(steps_per_execution=N): Keras runs N batches per call of its
compiled train function, its own answer to per-step overhead. Keras calls batch callbacks once per
execution, so N is sized for an execution of about TARGET_CALL_SECONDS: Stop still lands within a second.
"""

from __future__ import annotations

import time
from typing import Any

from core.engine import data as datasets
from core.engine.executions.base import Execution, make_optimizer
from core.engine.job import Cancelled, StopCheck, never_stop
from core.engine.step import TARGET_CALL_SECONDS
from core.engine.tf_setup import tf
from core.settings.config import TrainConfig

# The calibration of keras-fit-spe: untimed steps on a throwaway copy of the model, at least this
# many and this long, after one call that traces (and with XLA compiles) the step.
CALIBRATION_STEPS, CALIBRATION_SECONDS, CALIBRATION_MAX_STEPS = 3, 0.1, 50


def _stop_callback(execution: KerasFit):
    """A Keras callback that asks engine's should_stop() after each execution (training and evaluation) and marks
    each training execution for the race against the clock (execution.marks)."""
    import keras

    class StopWhenAsked(keras.callbacks.Callback):
        # Keras syncs with the device for the logs of any callback with batch hooks, once per
        # execution, unless the callback is async_safe: then it runs on a worker thread and the
        # steps keep flowing, as in a fit without callbacks. Stop may land a few batches later;
        # Keras flushes these calls at each epoch's and evaluation's end, before `stopped` is read.
        async_safe = True

        def on_train_batch_end(self, batch, logs=None):
            # The worker thread gets the logs as numbers, fetched from the device (Keras' pythonify_logs):
            # a time taken now is after the execution's work was done, even on a GPU, where the main
            # thread has already queued the next one. `batch` is the execution's last step (past the epoch's
            # end for a last, shorter execution).
            logs, done = logs or {}, min(batch + 1, execution.steps)
            execution.marks.append(
                (time.perf_counter(), done, float(logs.get("loss", "nan")), float(logs.get("accuracy", 0.0)))
            )
            if execution.should_stop():
                execution.stopped = self.model.stop_training = True

        def on_test_batch_end(self, batch, logs=None):
            if execution.should_stop():
                execution.stopped = self.model.stop_evaluating = True

    return StopWhenAsked()


class KerasFit(Execution):
    """model.fit one epoch at a time on the epoch's batches in order (shuffle=False), steps_per_execution=1."""

    name = "keras-fit"

    def __init__(self, config: TrainConfig, model, data: datasets.Dataset, jit_compile: bool):
        super().__init__(config, model, data, jit_compile)
        self.steps_per_execution = self._choose_steps_per_execution()
        model.compile(
            optimizer=make_optimizer(config),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
            steps_per_execution=self.steps_per_execution,
            jit_compile=jit_compile,
        )
        # What Keras will really do: it turns XLA off (with a warning) for a model that cannot use it.
        self.jit_compile = bool(model.jit_compile)
        self.should_stop: StopCheck = never_stop
        self.stopped = False
        self._callbacks = [_stop_callback(self)]
        self._epoch = None

    def _choose_steps_per_execution(self) -> int:
        return 1

    def prepare_epoch(self) -> None:
        # The epoch's batches, in the run's order, made into a tf.data pipeline before the clock starts: one
        # model.fit(x, y, epochs=N) call converts its arrays once, so converting them inside each epoch made this
        # arm 1.10x slower than that call (bench/train_speed.py: plain_fit_vs_one_fit_call).
        t, order = tf(), self.epoch_order()
        batches = t.data.Dataset.from_tensor_slices((self.data.x_train[order], self.data.y_train[order]))
        self._epoch = batches.batch(self.config.batch_size).prefetch(t.data.AUTOTUNE)

    def _watch(self, should_stop: StopCheck) -> None:
        self.should_stop, self.stopped = should_stop, False

    def train_epoch(self, should_stop: StopCheck) -> tuple[float, float]:
        self._watch(should_stop)
        self.marks = []
        # Already in the run's order, the same in every mode: a dataset, which fit never shuffles.
        history = self.model.fit(self._epoch, epochs=1, shuffle=False, verbose=0, callbacks=self._callbacks)
        if self.stopped:
            raise Cancelled
        return float(history.history["loss"][-1]), float(history.history["accuracy"][-1])

    def evaluate(self, should_stop: StopCheck) -> tuple[float, float]:
        self._watch(should_stop)
        scores = self.model.evaluate(
            self.data.x_test, self.data.y_test, verbose=0, return_dict=True, callbacks=self._callbacks
        )
        if self.stopped:
            raise Cancelled
        return float(scores["loss"]), float(scores["accuracy"])

    def calls_like(self, other: Execution) -> None:
        # Before this copy's first fit, which builds Keras' train function around the number (Keras 3 reads it there).
        self.steps_per_execution = self.model.steps_per_execution = other.call_steps()

    def call_steps(self) -> int:
        return self.steps_per_execution

    def info(self) -> dict[str, Any]:
        return {**super().info(), "steps_per_execution": self.steps_per_execution}


class KerasFitSpe(KerasFit):
    """keras-fit with compile(steps_per_execution=N), N calibrated so one execution lasts about 0.2 s."""

    name = "keras-fit-spe"

    def _choose_steps_per_execution(self) -> int:
        """N = TARGET_CALL_SECONDS / seconds per step, from train_on_batch on a throwaway copy of the model.

        The copy (fresh weights, same layers, optimizer, jit_compile and device) leaves the run's model
        and its data order untouched. Its per-step time includes Keras' per-call overhead, which N
        then amortises, so N errs low: an execution lasts at most about TARGET_CALL_SECONDS.
        """
        import keras

        batch = self.config.batch_size
        xb, yb = self.data.x_train[:batch], self.data.y_train[:batch]
        probe = keras.models.clone_model(self.model)
        probe.compile(
            optimizer=make_optimizer(self.config),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
            jit_compile=self.jit_compile,
        )
        probe.train_on_batch(xb, yb)  # traces (and with XLA compiles) the step: not counted
        began, done = time.perf_counter(), 0
        while done < CALIBRATION_MAX_STEPS and (
            done < CALIBRATION_STEPS or time.perf_counter() - began < CALIBRATION_SECONDS
        ):
            probe.train_on_batch(xb, yb)  # returns the loss as a number: each call waits for the device
            done += 1
        self.calibration_step_ms = (time.perf_counter() - began) / done * 1000
        return max(1, min(self.steps, int(TARGET_CALL_SECONDS * 1000 / self.calibration_step_ms)))

    def info(self) -> dict[str, Any]:
        return {**super().info(), "calibration_step_ms": self.calibration_step_ms}
