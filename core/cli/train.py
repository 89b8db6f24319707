"""python -m core train: one model on one device, one line per epoch, recorded epoch by epoch."""

from __future__ import annotations

import argparse

from core.cli.common import EXIT_USAGE, Command, db_flag, fail, save_and_report, stop_on_ctrl_c
from core.config import DATASETS, EXECUTIONS, MODELS, OPTIMIZERS, ConfigError, TrainConfig, canonical_execution
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
    return f"{result.status}: {steady}; {acc_text}; variables on {where}"


def cmd_train(args: argparse.Namespace) -> int:
    """Train one model and print one line per epoch, then a summary."""
    try:
        config = config_from_args(args)
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    from core.engine.training import train  # TensorFlow loads here, once the flags are known to be good

    run_id = new_run_id()
    try:
        store = Store(args.db)
        store.begin(run_id, config)
    except StoreError as err:
        return fail(str(err))
    print(
        f"training {config.model} on {config.dataset} on {config.device}: {config.epochs} epochs, "
        f"batch {config.batch_size}, {config.optimizer} lr {config.learning_rate}, {config.execution} execution",
        flush=True,
    )
    print(f"run {run_id}, recorded epoch by epoch in {store.path}", flush=True)

    def on_epoch(metrics, result) -> None:
        store.add_epoch(run_id, metrics, result)  # on disk before it is printed: a kill loses no printed epoch
        print(format_epoch(metrics, config.epochs), flush=True)

    result = train(config, on_epoch=on_epoch, should_stop=stop_on_ctrl_c(), run_id=run_id)
    return save_and_report(store, result, args.json, format_summary, "training failed.")


def _train_flags(p: argparse.ArgumentParser) -> None:
    add_train_flags(p)
    p.add_argument("--json", metavar="FILE", help="write the run's result as JSON to FILE")
    db_flag(p)


COMMAND = Command("train one model on one device", _train_flags, cmd_train)
