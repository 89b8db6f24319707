"""The command line: python -m core devices | train, and the registry other subcommands join."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable

from core.config import DATASETS, EXECUTIONS, MODELS, OPTIMIZERS, ConfigError, TrainConfig

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag prints one sentence (no usage block) and exits with 2."""

    def error(self, message: str):  # noqa: D102 - argparse hook
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help).\n")


def fail(message: str, code: int = EXIT_FAILED) -> int:
    """Print one sentence to stderr and return the exit code."""
    print(f"error: {message}", file=sys.stderr)
    return code


# -- devices -----------------------------------------------------------------
def cmd_devices(args: argparse.Namespace) -> int:
    """List the CPU, GPUs and the TensorFlow/CUDA build."""
    from core.engine import devices

    info = devices.host_info()
    if args.json:
        print(json.dumps(info.to_dict(), indent=2))
        return EXIT_OK
    print(f"TensorFlow {info.tensorflow} (Keras {info.keras}), Python {info.python} on {info.hostname}")
    print(f"CPU   {info.cpu_model}, {info.cpu_cores} cores usable ({info.logical_cpus} logical TF device(s))")
    cuda = f"CUDA {info.cuda_build}, cuDNN {info.cudnn_build}" if info.cuda_build else "no CUDA (CPU-only build)"
    print(f"Build {cuda}")
    if not info.gpus:
        print(f"GPU   none visible. {devices.GPU_ADVICE}")
    for gpu in info.gpus:
        memory = f", {gpu.memory_mb:,} MiB" if gpu.memory_mb else ""
        print(f"GPU:{gpu.index} {gpu.name}, compute capability {gpu.compute_capability or '?'}{memory}")
    return EXIT_OK


# -- train -------------------------------------------------------------------
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
    p.add_argument("--execution", choices=EXECUTIONS, default=d.execution)
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


def write_json(path: str | None, result) -> int | None:
    """Write result.to_json() to --json FILE; an exit code if that failed, else None."""
    if not path:
        return None
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(result.to_json())
    except OSError as err:
        return fail(f"--json: cannot write {path} ({err.strerror}).")
    return None


def _stop_on_ctrl_c() -> Callable[[], bool]:
    """Ctrl-C asks the run to stop after the current step; the finished epochs are kept."""
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    return stop.is_set


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
    from core.engine.training import train
    from core.history.store import Store, StoreError, new_run_id

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

    result = train(config, on_epoch=on_epoch, should_stop=_stop_on_ctrl_c(), run_id=run_id)
    try:
        store.finish(result)
    except StoreError as err:
        return fail(str(err))
    if (code := write_json(args.json, result)) is not None:
        return code
    if result.status == "failed":
        return fail(result.error or "training failed.")
    print(format_summary(result))
    return EXIT_CANCELLED if result.status == "cancelled" else EXIT_OK


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def command(name: str, help_text: str, add_flags: Callable[[argparse.ArgumentParser], None]):
    """Register a subcommand: name -> (help, flags, handler)."""

    def register(handler: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help_text, add_flags, handler)
        return handler

    return register


command("devices", "list the CPU, GPUs and TensorFlow build", lambda p: p.add_argument("--json", action="store_true"))(
    cmd_devices
)


def _train_flags(p: argparse.ArgumentParser) -> None:
    add_train_flags(p)
    p.add_argument("--json", metavar="FILE", help="write the run's result as JSON to FILE")
    _db_flag(p)


def _db_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="FILE", help="run history file (default $TFDASH_DB, else ~/.local/share/tfdash)")


command("train", "train one model on one device", _train_flags)(cmd_train)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
    # Importing these modules registers their subcommands.
    from core.cli import history as cli_history  # noqa: F401
    from core.cli import sweep as cli_sweep  # noqa: F401

    parser = OneLineParser(prog="python -m core", description="Train TensorFlow models and compare devices.")
    subs = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name, (help_text, add_flags, handler) in COMMANDS.items():
        sub = subs.add_parser(name, help=help_text, description=help_text)
        add_flags(sub)
        sub.set_defaults(handler=handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    return args.handler(args)
