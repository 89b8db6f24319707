"""The references the dashboard's epochs are held against, written as people write them (bench/train_speed.py):

- one_fit_call: one model.fit(x, y, epochs=N) call, as most Keras code trains, its epochs timed by an epoch-end
  callback (the clock Keras users read);
- tutorial_program: the seed tutorial's own TF1 program through tf.compat.v1: placeholders, feed_dict,
  GradientDescentOptimizer(0.1), batch 100, softmax regression on the same Fashion-MNIST arrays, a shuffled epoch
  order each epoch as its mnist.train.next_batch gave it.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from core.engine import models
from core.engine.executions import jit_compile_for
from core.engine.tf_setup import tf

QUICK_MLP = dict(model="mlp", hidden_units=128, optimizer="adam", learning_rate=0.001, train_subset=30_000)
TUTORIAL = dict(model="softmax", optimizer="sgd", learning_rate=0.1, train_subset=None)


def one_fit_call(data, settings: dict, epochs: int, device: str = "/CPU:0", seed: int = 1) -> list[float]:
    """Each epoch's training seconds of one model.fit(x, y, epochs=epochs) call (Keras' own shuffle, no validation)."""
    import keras

    rows = settings["train_subset"] or len(data.x_train)
    times: list[float] = []
    began: list[float] = []

    class Clock(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            began.append(time.perf_counter())

        def on_epoch_end(self, epoch, logs=None):  # logs hold the epoch's numbers: the device has finished it
            times.append(time.perf_counter() - began[-1])

    with tf().device(device):
        keras.utils.set_random_seed(seed)
        model = models.build(settings["model"], settings["hidden_units"] if "hidden_units" in settings else 128)
        optimizer = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam}[settings["optimizer"]]
        model.compile(
            optimizer=optimizer(learning_rate=settings["learning_rate"]),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
            jit_compile=jit_compile_for(device, settings["model"], "auto", None, "keras-fit"),
        )
        model.fit(
            data.x_train[:rows], data.y_train[:rows], batch_size=100, epochs=epochs, verbose=0, callbacks=[Clock()]
        )
    return times


def tutorial_program(data, epochs: int, seed: int = 0) -> tuple[list[float], float]:
    """The TF1 tutorial program: each epoch's seconds (600 session.run calls with feed_dict) and the test accuracy."""
    t = tf()
    v1 = t.compat.v1
    x_train = data.x_train.reshape(-1, 784)
    labels = np.eye(10, dtype=np.float32)[data.y_train]
    graph = t.Graph()
    with graph.as_default():
        x = v1.placeholder(t.float32, [None, 784])
        y_ = v1.placeholder(t.float32, [None, 10])
        w = v1.Variable(t.zeros([784, 10]))
        b = v1.Variable(t.zeros([10]))
        y = t.nn.softmax(t.matmul(x, w) + b)
        cross_entropy = t.reduce_mean(-t.reduce_sum(y_ * v1.log(y + 1e-10), axis=[1]))
        train_step = v1.train.GradientDescentOptimizer(0.1).minimize(cross_entropy)
        correct = t.reduce_mean(t.cast(t.equal(t.argmax(y, 1), t.argmax(y_, 1)), t.float32))
        init = v1.global_variables_initializer()
    rng = np.random.default_rng(seed)
    times = []
    with v1.Session(graph=graph) as session:
        session.run(init)
        for _ in range(epochs):
            order = rng.permutation(len(x_train))
            began = time.perf_counter()
            for start in range(0, len(order) - 99, 100):
                batch = order[start : start + 100]  # next_batch(100): a slice of the epoch's shuffled order
                session.run(train_step, feed_dict={x: x_train[batch], y_: labels[batch]})
            times.append(time.perf_counter() - began)
        test = {x: data.x_test.reshape(-1, 784), y_: np.eye(10, dtype=np.float32)[data.y_test]}
        accuracy = float(session.run(correct, feed_dict=test))
    return times, accuracy


def steady(times: list[float]) -> float:
    """The median of epochs 2..N: epoch 1 traces and compiles."""
    return statistics.median(times[1:])
