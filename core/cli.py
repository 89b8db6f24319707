"""The command line: python -m core devices | train | history | export | import (more register here)."""

from __future__ import annotations

import argparse
import json
import os
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
    from core import devices

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
    from core.store import Store, StoreError, new_run_id
    from core.training import train

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
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(result.to_json())
        except OSError as err:
            return fail(f"--json: cannot write {args.json} ({err.strerror}).")
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


# -- history, export, import ---------------------------------------------------------
def _existing_store(args: argparse.Namespace):
    """The history named by --db, or None where there is no such file yet (reading creates nothing)."""
    from core.store import Store, default_db_path

    path = args.db or default_db_path()
    return Store(path) if os.path.exists(path) else None


def _table(head: str, rows: list[tuple[str, ...]]) -> str:
    """An aligned text table: the header's columns are separated by '|'."""
    table = [tuple(head.split("|")), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table)


def format_history(rows) -> str:
    """The history as an aligned text table, newest first."""
    cells = [
        (
            r.run_id,
            (r.when or "?")[:16].replace("T", " "),
            r.dataset or "?",
            r.model or "?",
            f"{r.device} ({r.variables_on})" if r.variables_on else str(r.device),
            f"{r.epochs_done}/{r.epochs_total}",
            str(r.batch_size),
            "-" if r.final_test_accuracy is None else f"{r.final_test_accuracy:.4f}",
            "-" if r.median_epoch_seconds is None else f"{r.median_epoch_seconds:.3f}",
            r.status,
            r.host or "?",
        )
        for r in rows
    ]
    return _table("RUN|WHEN (UTC)|DATASET|MODEL|DEVICE|EPOCHS|BATCH|TEST ACC|MEDIAN S|STATUS|HOST", cells)


def format_sweeps(rows) -> str:
    """The stored sweeps as an aligned text table, newest first; failed ones say why instead of a crossover."""
    cells = [
        (
            r.run_id,
            (r.when or "?")[:16].replace("T", " "),
            f"{r.model or '?'} (hidden {r.hidden_units})" if r.hidden_units else r.model or "?",
            ",".join(r.devices) or "?",
            ",".join(map(str, r.batch_sizes)) or "?",
            f"{r.points_measured}/{r.points_total}",
            r.status,
            r.host or "?",
            r.crossover if r.points_measured else r.error or r.crossover,
        )
        for r in rows
    ]
    return _table("SWEEP|WHEN (UTC)|MODEL|DEVICES|BATCH SIZES|POINTS|STATUS|HOST|CROSSOVER", cells)


def cmd_history(args: argparse.Namespace) -> int:
    """List recorded runs, then sweeps, newest first."""
    from core.store import StoreError

    try:
        store = _existing_store(args)
        rows, sweeps = (store.history(), store.sweeps()) if store else ([], [])
    except StoreError as err:
        return fail(str(err))
    if args.json:  # one list; each row says its kind (train or sweep)
        print(json.dumps([{"kind": r.kind, **r.to_dict()} for r in [*rows, *sweeps]], indent=2))
    elif not rows and not sweeps:
        print(f"No runs recorded yet in {store.path if store else args.db or 'the default history'}.")
    else:
        tables = ([format_history(rows)] if rows else []) + ([format_sweeps(sweeps)] if sweeps else [])
        print("\n\n".join(tables))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """Print one run or sweep as JSON (the train/sweep --json format), or its epochs or points as CSV."""
    from core.store import StoreError

    try:
        store = _existing_store(args)
        text = (store.export_csv if args.csv else store.export_json)(args.run_id) if store else None
    except StoreError as err:
        return fail(str(err))
    except KeyError:
        text = None
    if text is None:
        return fail(f"there is no run {args.run_id!r} in the history (python -m core history lists them).")
    sys.stdout.write(text if args.csv else text + "\n")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """Add a run or sweep file (from train/sweep --json or export, e.g. a GPU server's) to the history."""
    from core.importer import RunFileError
    from core.store import Store, StoreError

    try:
        outcome = Store(args.db).import_result_file(args.file)
    except RunFileError as err:
        return fail(f"{args.file}: {err}")
    except StoreError as err:
        return fail(str(err))
    print(outcome.describe())
    return EXIT_OK


def _history_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    _db_flag(p)


def _export_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--csv", action="store_true", help="a run's epochs or a sweep's points as CSV instead of JSON")
    _db_flag(p)


def _import_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a run's or a sweep's JSON file (at most 5 MB)")
    _db_flag(p)


command("history", "list recorded runs and sweeps, newest first", _history_flags)(cmd_history)
command("export", "print a recorded run or sweep as JSON, or its epochs or points as CSV", _export_flags)(cmd_export)
command("import", "add a run's or sweep's JSON file (e.g. from a GPU server) to the history", _import_flags)(cmd_import)


# -- sweep -------------------------------------------------------------------
def _sweep_flags(p: argparse.ArgumentParser) -> None:
    from core.sweep import DEFAULT_BATCH_SIZES, SweepConfig

    d = SweepConfig()
    p.add_argument("--devices", default=",".join(d.devices), help="comma-separated, e.g. cpu,gpu")
    p.add_argument("--model", choices=MODELS, default=d.model)
    p.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCH_SIZES)), help="comma-separated")
    p.add_argument("--steps", type=int, default=None, help="timed steps per repeat (default: about 0.5 s of work)")
    p.add_argument("--repeats", type=int, default=d.repeats, help="timed repeats per point; median and range shown")
    p.add_argument("--hidden-units", type=int, default=d.hidden_units, help="MLP hidden layer width")
    p.add_argument("--dataset", choices=DATASETS, default=d.dataset)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--json", metavar="FILE", help="write the sweep's result as JSON to FILE")
    _db_flag(p)


def format_point(point) -> str:
    """One line per measured point: median samples/s [min-max], ms per step, GFLOP/s and share of peak."""
    if point.samples_per_second is None:
        return f"{point.label:<6} {point.batch_size:>6}  {point.error}"
    spread = f"[{point.samples_per_second_min:,.0f}-{point.samples_per_second_max:,.0f}]"
    share = "-" if point.utilisation is None else f"{point.utilisation:.1%}"
    return (
        f"{point.label:<6} {point.batch_size:>6}  {point.samples_per_second:>12,.0f} {spread:<27} "
        f"{point.step_ms:>9.3f} {point.gflops_per_second:>9.2f} {share:>8}"
    )


SWEEP_HEADER = (
    f"{'device':<6} {'batch':>6}  {'samples/s (median [min-max])':<40} {'ms/step':>9} {'GFLOP/s':>9} {'of peak':>8}"
)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Time training at each batch size on each device, print a table and the crossover."""
    from core.sweep import SweepConfig, run_sweep

    try:
        config = SweepConfig(
            devices=args.devices,
            model=args.model,
            batch_sizes=args.batch_sizes,
            steps=args.steps,
            repeats=args.repeats,
            hidden_units=args.hidden_units,
            dataset=args.dataset,
            seed=args.seed,
        )
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    from core.store import Store, StoreError, new_run_id

    run_id = new_run_id()
    try:
        store = Store(args.db)  # opened first: an unusable history fails now, not after minutes of timing
    except StoreError as err:
        return fail(str(err))
    width = f" (hidden {config.hidden_units})" if config.model == "mlp" else ""
    steps = f"{config.steps} steps" if config.steps else "about 0.5 s"
    print(
        f"sweep: {config.model}{width} on {', '.join(config.devices)}, batch sizes "
        f"{', '.join(map(str, config.batch_sizes))}; {config.repeats} timed repeats of {steps} each "
        f"after a warm-up, {config.dataset} data",
        flush=True,
    )
    print(f"sweep {run_id}, recorded in {store.path} when it ends", flush=True)
    shown: set[str] = set()

    def on_point(point, result) -> None:
        if point.device not in shown:
            shown.add(point.device)
            info = result.devices[point.device]
            peak = info.get("peak_gflops")
            peak_text = f"matmul peak {peak:,.1f} GFLOP/s (float32)" if peak else "matmul peak unknown"
            flops = result.model["train_flops_per_sample"]
            print(f"{point.label}: {info['name']}; {peak_text}; {flops:,} training FLOPs per sample", flush=True)
            print(SWEEP_HEADER, flush=True)
        print(format_point(point), flush=True)

    result = run_sweep(config, on_point=on_point, should_stop=_stop_on_ctrl_c(), run_id=run_id)
    try:
        store.save_record(result.kind, result.to_dict(), run_id, result.status)
    except StoreError as err:
        return fail(str(err))
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(result.to_json())
        except OSError as err:
            return fail(f"--json: cannot write {args.json} ({err.strerror}).")
    if result.status == "failed":
        return fail(result.error or "the sweep failed.")
    measured = sum(1 for p in result.points if p.samples_per_second)
    print(f"{result.status}: {measured} of {config.progress_total} points measured. {result.crossover()}")
    return EXIT_CANCELLED if result.status == "cancelled" else EXIT_OK


command("sweep", "time training across batch sizes on each device; find where the GPU wins", _sweep_flags)(cmd_sweep)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
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
