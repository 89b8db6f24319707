"""python -m core train: one model on one device, one line per epoch, recorded epoch by epoch."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import fields

from core.analysis import compare, why, why_sentences
from core.cli.common import EXIT_USAGE, Command, check_json, db_flag, fail, save_and_report, stop_on_ctrl_c
from core.engine import memory
from core.history.limits import without_controls
from core.history.recorder import Recorder
from core.history.store import Store, StoreError, new_run_id
from core.machine.device_spec import device_name
from core.results import steady_epoch_seconds
from core.results.states import State
from core.settings.config import (
    DATASETS,
    EXECUTIONS,
    MODELS,
    OPTIMIZERS,
    PRECISIONS,
    XLA_AUTO_RULE,
    XLA_CHOICES,
    ConfigError,
    TrainConfig,
    canonical_execution,
)


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
    p.add_argument("--xla", choices=XLA_CHOICES, default=d.xla, help=f"jit_compile: on, off, or {XLA_AUTO_RULE}")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """TrainConfig from parsed flags; raises ConfigError naming the field."""
    return TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})


def format_epoch(m, total: int) -> str:
    """One line per finished epoch."""
    note = "  (warm-up: includes tracing/compilation)" if m.warmup else ""
    return (
        f"epoch {m.epoch:>3}/{total}  train {m.train_seconds:7.3f}s  eval {m.eval_seconds:6.3f}s  "
        f"loss {m.train_loss:.4f}  acc {m.train_accuracy:.4f}  test_acc {m.test_accuracy:.4f}  "
        f"{m.samples_per_second:>10,.0f} samples/s{note}"
    )


def format_summary(result) -> str:
    """The steady epoch (core.analysis.compare's, as the page says it) and final accuracy, in one line."""
    seconds = steady_epoch_seconds(result)
    steady = (
        f"steady-state epoch {seconds:.3f}s ({compare.STEADY_EPOCH}, 2-{len(result.epochs)})"
        if seconds
        else ("no steady-state epoch (epoch 1 is warm-up; run 2+ epochs to time)")
    )
    acc = result.final_test_accuracy()
    acc_text = f"final test accuracy {acc:.4f}" if acc is not None else "no finished epoch"
    where = result.device.get("variables_on", "?")
    # The why and the time to an accuracy first: the summary stays the last line, as scripts read it.
    bound = "".join(f"{line}\n" for line in why_lines(result))
    reached = compare.time_to_accuracy_sentence(result)
    race = f"{reached}\n" if reached else ""
    return f"{bound}{race}{result.status}: {steady}; {acc_text}; variables on {where}"


def why_lines(result) -> list[str]:
    """The run's why, a sentence a line: the bound and the trace's check, the line and its test, the advice."""
    w = why.explain(result)
    if w is None:
        return []
    said = (
        why_sentences.bound_sentence(w),
        why_sentences.trace_check(w),
        why_sentences.line_sentence(w),
        why_sentences.advice(w),
    )
    return [s for s in said if s]


def write_trace(result, directory: str | None) -> str | None:
    """The trace written under --profile-dir, as a sentence (None without the flag); a failure, said."""
    if directory is None:
        return None
    if not result.trace:
        why_not = (result.measured.trace_error if result.measured else None) or "it needs 2+ epochs"
        return f"No trace was written to {directory}: this run traced no window of its step ({why_not})."
    from core.history.profiles import write_profile_dir

    try:
        path = write_profile_dir(directory, result.run_id, result.host.get("hostname") or "host", result.trace)
    except StoreError as err:
        return str(err)
    return without_controls(f"trace written to {path}: open it with tensorboard --logdir {directory} (Profile tab)")


def cmd_train(args: argparse.Namespace) -> int:
    """Train one model and print one line per epoch, then a summary."""
    try:
        config = config_from_args(args)
        memory.check(config)  # a run that cannot fit in free memory is refused before TensorFlow or a row
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    if (code := check_json(args.json)) is not None:
        return code  # before the training, not after it
    if args.profile_dir and os.path.exists(args.profile_dir) and not os.path.isdir(args.profile_dir):
        return fail(
            f"--profile-dir {args.profile_dir} is a file; name a folder (it is created if need be).", EXIT_USAGE
        )
    from core.engine.training import train  # TensorFlow loads here, once the flags are known to be good

    try:
        ready([config.device], config.dataset, config)  # before the history holds a row
        store = Store(args.db)
    except (StoreError, RuntimeError) as err:
        return fail(str(err))
    run_id = new_run_id()
    recorder = Recorder(store, run_id, config)
    try:
        recorder.begin()
    except StoreError as err:
        return fail(str(err))
    print(
        f"training {config.model} on {config.dataset} on {config.device}: {config.epochs} epochs, "
        f"batch {config.batch_size}, {config.optimizer} lr {config.learning_rate}, {config.execution} execution, "
        f"{config.precision}, {xla_said(config)}",
        flush=True,
    )
    print(without_controls(f"run {run_id}, recorded epoch by epoch in {store.path}"), flush=True)
    on_epoch = epoch_printer(recorder, config.epochs)
    if config.node:
        result, sentence = train_on_node(config, on_epoch, stop_on_ctrl_c(), run_id)
        if result is None:  # failed or lost before its first epoch: the row says so too
            recorder.finish(state=State.FAILED, error=sentence)
            return fail(sentence or f"Run {run_id} ended on {config.node} before its first epoch.")
    else:
        result = train(
            config, on_epoch=on_epoch, should_stop=stop_on_ctrl_c(), run_id=run_id, on_progress=say_measuring
        )
    if said := write_trace(result, args.profile_dir):
        print(said, flush=True)
    return save_and_report(recorder, result, args.json, format_summary, "training failed.")


def xla_said(config: TrainConfig) -> str:
    """'XLA on (auto)': what the run's xla setting becomes on its device (a node's own backend decides there)."""
    if config.node:
        return f"XLA {config.xla}" + (f" (as {config.node}'s device decides)" if config.xla == "auto" else "")
    from core.engine import devices
    from core.engine.executions.base import jit_compile_for

    host = devices.host_info().to_dict()
    jit = jit_compile_for(config.device, config.model, config.xla, host, config.execution)
    return f"XLA {'on' if jit else 'off'}" + (" (auto)" if config.xla == "auto" else "")


def epoch_printer(recorder: Recorder, total: int):
    """on_epoch for the CLI: write the epoch (on disk before it is printed: a kill loses no printed epoch), then
    its line; the history's first refusal is said once on stderr, and training goes on."""
    warned = []

    def on_epoch(metrics, result) -> None:
        note = recorder.epoch(metrics, result)
        if note and not warned:
            print(f"warning: {without_controls(note)}", file=sys.stderr, flush=True)
            warned.append(note)
        print(format_epoch(metrics, total), flush=True)

    return on_epoch


def say_measuring(progress) -> None:
    """on_progress for the CLI: only the seconds it measures after epoch 1 are said, on stderr (stdout is the epochs'
    lines, read line by line by scripts)."""
    if progress.measuring:
        print(
            f"epoch {progress.epoch - 1} done; measuring the step, untimed (a trace, two more batch sizes)",
            file=sys.stderr,
            flush=True,
        )


def ready(devices_: list[str], dataset: str, config: TrainConfig | None = None) -> None:
    """Every device present (a node's: the cluster answers and has it) and the dataset loaded (downloaded if need
    be), so a missing GPU or dataset is one sentence before anything is stored; RuntimeError says why not."""
    from core.engine import data, devices

    local = [d for d in devices_ if device_name(d).node is None]
    for node in dict.fromkeys(n for d in devices_ if (n := device_name(d).node)):
        on_node(node)
    for device in local:
        devices.resolve(device)
    if local and not data.availability(dataset).available:  # a node loads its own copy, or is sent this one
        data.load(dataset, getattr(config, "train_subset", None), getattr(config, "seed", 0))  # kept for the run


def on_node(node: str) -> None:
    """Connect to the cluster (--ray or TFDASH_RAY_ADDRESS) and check it has `node`; RuntimeError says why not."""
    from core.cluster import connect, nodes

    connect.connect()
    if warning := connect.warning():
        print(warning, file=sys.stderr, flush=True)
    nodes.find(node)


def train_on_node(config: TrainConfig, on_epoch, should_stop, run_id: str):
    """The run on its Ray node, epochs streamed back to on_epoch: (result, sentence); result None if none came back."""
    from core.engine.kinds import JOB_KINDS
    from core.runner import remote
    from core.runner.deltas import grown

    last: list = [None]
    epochs: list = []

    def on_item(metrics, sent) -> None:
        last[0] = grown(sent, epochs, metrics)  # the node sends each epoch once: the run grows here
        on_epoch(metrics, last[0])

    ending = remote.run(JOB_KINDS[TrainConfig].run, config, run_id, should_stop, on_item)
    return remote.result_of(ending, last[0])


def _train_flags(p: argparse.ArgumentParser) -> None:
    add_train_flags(p)
    p.add_argument("--json", metavar="FILE", help="write the run's result as JSON to FILE")
    p.add_argument("--profile-dir", metavar="DIR", help="write the run's profiler trace under DIR, for TensorBoard")
    db_flag(p)


COMMAND = Command("train one model on one device", _train_flags, cmd_train)
