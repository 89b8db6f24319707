"""python -m core train: one model on one device, one line per epoch, recorded epoch by epoch."""

from __future__ import annotations

import argparse
import contextlib
import sys

from core import compare, why
from core.cli.common import EXIT_USAGE, Command, db_flag, fail, save_and_report, stop_on_ctrl_c
from core.config import (
    DATASETS,
    EXECUTIONS,
    MODELS,
    OPTIMIZERS,
    PRECISIONS,
    XLA_CHOICES,
    ConfigError,
    TrainConfig,
    canonical_execution,
)
from core.engine import memory
from core.history.store import Store, StoreError, new_run_id


def add_train_flags(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that trains: one per TrainConfig field."""
    d = TrainConfig()
    p.add_argument("--dataset", choices=DATASETS, default=d.dataset)
    p.add_argument("--model", choices=MODELS, default=d.model)
    p.add_argument("--device", default=d.device, help="cpu, gpu, gpu:N or cpu:N")
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--optimizer", choices=OPTIMIZERS, default=d.optimizer)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--execution", type=canonical_execution, choices=EXECUTIONS, default=d.execution)
    p.add_argument("--train-subset", type=int, default=None, help="use only the first N training samples")
    p.add_argument("--hidden-units", type=int, default=d.hidden_units, help="MLP hidden layer width")
    p.add_argument("--precision", choices=PRECISIONS, default=d.precision, help="the Keras dtype policy of every layer")
    p.add_argument("--xla", choices=XLA_CHOICES, default=d.xla, help="jit_compile: on, off, or auto (on for a GPU)")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """TrainConfig from parsed flags; raises ConfigError naming the field."""
    return TrainConfig(
        dataset=args.dataset,
        model=args.model,
        device=args.device,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        optimizer=args.optimizer,
        seed=args.seed,
        execution=args.execution,
        train_subset=args.train_subset,
        hidden_units=args.hidden_units,
        precision=args.precision,
        xla=args.xla,
    )


def format_epoch(m, total: int) -> str:
    """One line per finished epoch."""
    note = "  (warm-up: includes tracing/compilation)" if m.warmup else ""
    return (
        f"epoch {m.epoch:>3}/{total}  train {m.train_seconds:7.3f}s  eval {m.eval_seconds:6.3f}s  "
        f"loss {m.train_loss:.4f}  acc {m.train_accuracy:.4f}  test_acc {m.test_accuracy:.4f}  "
        f"{m.samples_per_second:>10,.0f} samples/s{note}"
    )


def format_summary(result) -> str:
    """Median steady-state epoch time and final accuracy, in one line."""
    median = result.median_epoch_seconds()
    steady = (
        f"median steady-state epoch {median:.3f}s (epochs 2-{len(result.epochs)})"
        if median
        else ("no steady-state epoch (epoch 1 is warm-up; run 2+ epochs to time)")
    )
    acc = result.final_test_accuracy()
    acc_text = f"final test accuracy {acc:.4f}" if acc is not None else "no finished epoch"
    where = result.device.get("variables_on", "?")
    split = why.run_split(result)
    # The bound and the time to an accuracy first: the summary stays the last line, as scripts read it.
    bound = f"{why.bound_sentence(split)} {why.advice(split)}\n" if split else ""
    reached = compare.time_to_accuracy_sentence(result)
    race = f"{reached}\n" if reached else ""
    return f"{bound}{race}{result.status}: {steady}; {acc_text}; variables on {where}"


def cmd_train(args: argparse.Namespace) -> int:
    """Train one model and print one line per epoch, then a summary."""
    try:
        config = config_from_args(args)
        memory.check(config)  # a run that cannot fit in free memory is refused before TensorFlow or a row
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    from core.engine import devices
    from core.engine.training import train  # TensorFlow loads here, once the flags are known to be good

    try:
        if config.node:  # a Ray node's device: the cluster must answer and have that node (Ray loads only now)
            on_node(config)
        else:
            devices.resolve(config.device)  # a GPU that is not here is refused before the history holds a row
        store = Store(args.db)
    except (StoreError, devices.DeviceError, RuntimeError) as err:
        return fail(str(err))
    run_id = new_run_id()
    try:
        store.begin(run_id, config)
    except StoreError as err:
        return fail(str(err))
    print(
        f"training {config.model} on {config.dataset} on {config.device}: {config.epochs} epochs, "
        f"batch {config.batch_size}, {config.optimizer} lr {config.learning_rate}, {config.execution} execution, "
        f"{config.precision}, XLA {config.xla}",
        flush=True,
    )
    print(f"run {run_id}, recorded epoch by epoch in {store.path}", flush=True)

    writer = EpochWriter(store, run_id)

    def on_epoch(metrics, result) -> None:
        writer.write(metrics, result)  # on disk before it is printed: a kill loses no printed epoch
        print(format_epoch(metrics, config.epochs), flush=True)

    if config.node:
        result, sentence = train_on_node(config, on_epoch, stop_on_ctrl_c(), run_id)
        if result is None:  # failed or lost before its first epoch: the row says so too
            with contextlib.suppress(StoreError):
                store.mark(run_id, "failed", sentence)
            return fail(sentence or f"Run {run_id} ended on {config.node} before its first epoch.")
    else:
        result = train(config, on_epoch=on_epoch, should_stop=stop_on_ctrl_c(), run_id=run_id)
    return save_and_report(store, result, args.json, format_summary, "training failed.", writer.kept)


def on_node(config: TrainConfig) -> None:
    """Connect to the cluster (--ray or TFDASH_RAY_ADDRESS) and check it has the config's node; RuntimeError says why."""
    from core.cluster import connect, nodes

    connect.connect()
    nodes.find(config.node)


def train_on_node(config: TrainConfig, on_epoch, should_stop, run_id: str):
    """The run on its Ray node, epochs streamed back to on_epoch: (result, sentence); result None if none came back."""
    from core.cluster import remote
    from core.engine.kinds import JOB_KINDS

    last: list = [None]

    def on_item(metrics, result) -> None:
        last[0] = result
        on_epoch(metrics, result)

    ending = remote.run(JOB_KINDS[TrainConfig], config, run_id, should_stop, on_item)
    return remote.result_of(ending, last[0])


def epoch_ranges(epochs: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'; [] -> 'none'."""
    spans: list[list[int]] = []
    for n in sorted(epochs):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans) or "none"


class EpochWriter:
    """Writes each epoch as it finishes; one the history refuses (locked, full) waits for the next try, and
    training goes on: its work is kept in the final write, or in --json, and kept() says which epochs are stored."""

    def __init__(self, store: Store, run_id: str):
        self.store, self.run_id = store, run_id
        self.stored: list[int] = []
        self.pending: list = []
        self.warned = False

    def write(self, metrics, result) -> None:
        """Write this epoch and any earlier one still pending; on failure say so once on stderr and go on."""
        self.pending.append(metrics)
        try:
            while self.pending:
                self.store.add_epoch(self.run_id, self.pending[0], result)
                self.stored.append(self.pending.pop(0).epoch)
        except StoreError as err:
            if not self.warned:
                print(f"warning: {err} Training goes on; the epochs are written again later.", file=sys.stderr)
                self.warned = True

    def kept(self) -> str:
        """' Epochs 1-3 of run ID are stored in it; 4-10 could not be.'"""
        missing, stored = [m.epoch for m in self.pending], epoch_ranges(self.stored)
        if not missing:
            return f" Epochs {stored} of run {self.run_id} are stored in it; only its final state is not."
        return f" Epochs {stored} of run {self.run_id} are stored in it; {epoch_ranges(missing)} could not be."


def _train_flags(p: argparse.ArgumentParser) -> None:
    add_train_flags(p)
    p.add_argument("--json", metavar="FILE", help="write the run's result as JSON to FILE")
    db_flag(p)


COMMAND = Command("train one model on one device", _train_flags, cmd_train)
