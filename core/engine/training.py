"""train(config) -> RunResult: a fresh model inside tf.device, timed honestly epoch by epoch."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from core.config import TrainConfig
from core.engine import data as datasets
from core.engine import devices, flops, models, peak
from core.engine.tf_setup import tf
from core.results import EpochMetrics, RunResult, utc_now

# In fast mode one call runs many optimizer steps (a loop inside one tf.function),
# sized so that a call lasts about this long: short enough to honour Stop within a
# second and to report progress, long enough that per-call overhead vanishes.
TARGET_CALL_SECONDS = 0.2
EVAL_BATCH = 1000

EpochCallback = Callable[[EpochMetrics, RunResult], None]
StopCheck = Callable[[], bool]


class Cancelled(Exception):
    """should_stop() said stop; the epoch in progress is discarded."""


def _make_optimizer(config: TrainConfig):
    import keras

    factories = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam}
    return factories[config.optimizer](learning_rate=config.learning_rate)


def _use_xla(tf_device: str) -> bool:
    # Keras' jit_compile="auto" turns XLA on only where there is a GPU; we do the same
    # on GPUs. On the CPU XLA helps the small models but slows convolutions.
    return tf_device.startswith("/GPU")


def build_train_chunk(model, optimizer, x, y, batch: int, jit: bool):
    """The fast training step, shared with core.engine.sweep: train_chunk(perm, start, count) -> (loss sum, hits).

    One call runs `count` optimizer steps; step i trains on the rows of x, y listed in
    perm[(start + i) * batch : (start + i + 1) * batch]. x, y should already be on the device.
    """
    t = tf()
    import keras

    loss_fn = keras.losses.sparse_categorical_crossentropy

    @t.function(jit_compile=jit, reduce_retracing=True)
    def train_chunk(perm, start, count):
        loss_sum = t.constant(0.0)
        correct = t.constant(0.0)
        for i in t.range(count):
            idx = t.slice(perm, [(start + i) * batch], [batch])
            xb, yb = t.gather(x, idx), t.gather(y, idx)
            with t.GradientTape() as tape:
                probs = model(xb, training=True)
                loss = t.reduce_mean(loss_fn(yb, probs))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply(grads, model.trainable_variables)
            loss_sum += loss
            hits = t.equal(t.argmax(probs, axis=1, output_type=t.int32), yb)
            correct += t.reduce_sum(t.cast(hits, t.float32))
        return loss_sum, correct

    return train_chunk


class FastEngine:
    """Several optimizer steps per tf.function call over data already on the device."""

    def __init__(self, config: TrainConfig, model, data: datasets.Dataset, tf_device: str):
        t = tf()
        import keras

        self.config, self.model = config, model
        self.optimizer = _make_optimizer(config)
        self.optimizer.build(model.trainable_variables)
        self.rng = np.random.default_rng(config.seed)
        # Copy the data to the device once; each step gathers its batch there.
        self.x, self.y = t.constant(data.x_train), t.constant(data.y_train)
        self.x_test, self.y_test = t.constant(data.x_test), t.constant(data.y_test)
        self.n_test = len(data.x_test)
        self.n = len(data.x_train)
        self.steps = config.steps_per_epoch
        self.samples_per_epoch = self.steps * config.batch_size
        batch = config.batch_size
        loss_fn = keras.losses.sparse_categorical_crossentropy
        jit = _use_xla(tf_device)

        train_chunk = build_train_chunk(model, self.optimizer, self.x, self.y, batch, jit)

        @t.function(jit_compile=jit, reduce_retracing=True)
        def eval_chunk(xb, yb):
            probs = model(xb, training=False)
            loss = t.reduce_sum(loss_fn(yb, probs))
            hits = t.equal(t.argmax(probs, axis=1, output_type=t.int32), yb)
            return loss, t.reduce_sum(t.cast(hits, t.float32))

        self._train_chunk, self._eval_chunk = train_chunk, eval_chunk
        self._chunk = 1

    def train_epoch(self, should_stop: StopCheck) -> tuple[float, float]:
        """Run one epoch; return (mean batch loss, accuracy). Raises Cancelled."""
        t = tf()
        perm = t.constant(self.rng.permutation(self.n)[: self.samples_per_epoch].astype(np.int32))
        done, loss_sum, correct = 0, 0.0, 0.0
        while done < self.steps:
            if should_stop():
                raise Cancelled
            count = min(self._chunk, self.steps - done)
            began = time.perf_counter()
            loss, hits = self._train_chunk(perm, t.constant(done), t.constant(count))
            # .numpy() waits for the device to finish: the sync point that makes timing honest.
            loss_sum += float(loss.numpy())
            correct += float(hits.numpy())
            per_step = (time.perf_counter() - began) / count
            self._chunk = max(1, min(self.steps, int(TARGET_CALL_SECONDS / max(per_step, 1e-7))))
            done += count
        return loss_sum / self.steps, correct / self.samples_per_epoch

    def evaluate(self, should_stop: StopCheck) -> tuple[float, float]:
        """(mean loss, accuracy) over the whole test set."""
        loss_sum, correct = 0.0, 0.0
        for start in range(0, self.n_test, EVAL_BATCH):
            if should_stop():
                raise Cancelled
            loss, hits = self._eval_chunk(
                self.x_test[start : start + EVAL_BATCH], self.y_test[start : start + EVAL_BATCH]
            )
            loss_sum += float(loss.numpy())
            correct += float(hits.numpy())
        return loss_sum / self.n_test, correct / self.n_test


class KerasFitEngine:
    """Exactly what a user writes: model.compile(...), model.fit(...), model.evaluate(...)."""

    def __init__(self, config: TrainConfig, model, data: datasets.Dataset, tf_device: str):
        import keras

        self.config, self.model, self.data = config, model, data
        model.compile(
            optimizer=_make_optimizer(config),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
        )
        self.samples_per_epoch = len(data.x_train)
        self._should_stop: StopCheck = lambda: False
        self._stopped = False
        engine = self

        class _Stop(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                if engine._should_stop():
                    engine._stopped = self.model.stop_training = True

            def on_test_batch_end(self, batch, logs=None):
                if engine._should_stop():
                    engine._stopped = self.model.stop_evaluating = True

        self._callbacks = [_Stop()]

    def train_epoch(self, should_stop: StopCheck) -> tuple[float, float]:
        self._should_stop, self._stopped = should_stop, False
        history = self.model.fit(
            self.data.x_train,
            self.data.y_train,
            batch_size=self.config.batch_size,
            epochs=1,
            shuffle=True,
            verbose=0,
            callbacks=self._callbacks,
        )
        if self._stopped:
            raise Cancelled
        return float(history.history["loss"][-1]), float(history.history["accuracy"][-1])

    def evaluate(self, should_stop: StopCheck) -> tuple[float, float]:
        self._should_stop, self._stopped = should_stop, False
        scores = self.model.evaluate(
            self.data.x_test, self.data.y_test, verbose=0, return_dict=True, callbacks=self._callbacks
        )
        if self._stopped:
            raise Cancelled
        return float(scores["loss"]), float(scores["accuracy"])


ENGINES = {"fast": FastEngine, "keras-default": KerasFitEngine}


def _error_text(err: BaseException, config: TrainConfig) -> str:
    t = tf()
    if isinstance(err, (devices.DeviceError, datasets.DatasetError)):
        return str(err)
    if isinstance(err, t.errors.ResourceExhaustedError):
        return (
            f"Out of memory on {config.device} with batch size {config.batch_size} "
            f"and model {config.model}; try a smaller batch size or model."
        )
    first_line = (str(err).strip().splitlines() or [""])[0][:300]
    return f"{type(err).__name__}: {first_line}" if first_line else type(err).__name__


def _peak_gflops(tf_device: str) -> float | None:
    # Measured once per process (about half a second on a CPU), before any epoch is timed.
    # Utilisation is a bonus: a failed measurement must not fail the run.
    try:
        return peak.measure(tf_device).gflops
    except Exception:  # noqa: BLE001
        return None


def _finite(value: float) -> float:
    # JSON has no NaN: a diverged run (learning rate too high) records inf as a large number.
    return value if math.isfinite(value) else float(np.finfo(np.float32).max)


def train(
    config: TrainConfig,
    on_epoch: EpochCallback | None = None,
    should_stop: StopCheck | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Train a fresh model on config.device; never raises for a training failure."""
    stop: StopCheck = should_stop or (lambda: False)
    result = RunResult(
        config=config.to_dict(), host={}, device={"requested": config.device}, started_at=utc_now(), run_id=run_id
    )
    try:
        t = tf()
        import keras

        result.host = devices.host_info().to_dict()
        tf_device = devices.resolve(config.device)
        result.device.update(tf_device=tf_device, name=devices.describe(config.device), label=config.device.upper())
        data = datasets.load(config.dataset, config.train_subset, config.seed)
        with t.device(tf_device):
            keras.utils.set_random_seed(config.seed)
            # Build inside the scope: variables stay on the device they were created on.
            model = models.build(config.model, config.hidden_units)
            engine = ENGINES[config.execution](config, model, data, tf_device)
            placed = devices.short_device(model.trainable_variables[0].value.device)
            result.device["variables_on"] = placed
            result.device["parameters"] = int(model.count_params())
            if placed != tf_device.strip("/").upper():
                # Soft placement moved the model elsewhere: never report that as a run on the device asked for.
                raise devices.DeviceError(f"The model's variables were placed on {placed}, not {tf_device.strip('/')}.")
            train_flops = flops.count(model).train
            result.device["train_flops_per_sample"] = train_flops
            result.device["peak_gflops"] = _peak_gflops(tf_device)
            for epoch in range(1, config.epochs + 1):
                began = time.perf_counter()
                train_loss, train_acc = engine.train_epoch(stop)
                train_seconds = time.perf_counter() - began
                began = time.perf_counter()
                test_loss, test_acc = engine.evaluate(stop)
                eval_seconds = time.perf_counter() - began
                metrics = EpochMetrics(
                    epoch=epoch,
                    train_loss=_finite(train_loss),
                    train_accuracy=train_acc,
                    test_loss=_finite(test_loss),
                    test_accuracy=test_acc,
                    train_seconds=train_seconds,
                    eval_seconds=eval_seconds,
                    samples_per_second=engine.samples_per_epoch / train_seconds,
                    warmup=epoch == 1,
                    gflops_per_second=train_flops * engine.samples_per_epoch / train_seconds / 1e9,
                )
                result.epochs.append(metrics)
                if on_epoch is not None:
                    on_epoch(metrics, result)
        result.status = "completed"
    except Cancelled:
        result.status = "cancelled"
    except Exception as err:  # noqa: BLE001 - a failed run is a result, not a crash of the caller
        result.status = "failed"
        result.error = _error_text(err, config)
    result.finished_at = utc_now()
    return result
