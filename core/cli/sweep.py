"""python -m core sweep: training throughput across batch sizes on each device, and where the GPU wins."""

from __future__ import annotations

import argparse
from dataclasses import fields

from core.cli.common import EXIT_USAGE, Command, check_json, db_flag, fail, save_and_report, stop_on_ctrl_c
from core.cli.train import ready
from core.engine import memory
from core.history.limits import without_controls
from core.history.recorder import Recorder
from core.history.store import Store, StoreError, new_run_id
from core.results import crossover
from core.settings.config import (
    DATASETS,
    DEFAULT_BATCH_SIZES,
    MODELS,
    PRECISIONS,
    XLA_AUTO_RULE,
    XLA_CHOICES,
    ConfigError,
    SweepConfig,
)


def _sweep_flags(p: argparse.ArgumentParser) -> None:
    d = SweepConfig()
    p.add_argument("--devices", default=",".join(d.devices), help="comma-separated, e.g. cpu,gpu")
    p.add_argument("--model", choices=MODELS, default=d.model)
    p.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCH_SIZES)), help="comma-separated")
    p.add_argument("--steps", type=int, default=None, help="timed steps per repeat (default: about 0.5 s of work)")
    p.add_argument("--repeats", type=int, default=d.repeats, help="timed repeats per point; median and range shown")
    p.add_argument("--hidden-units", type=int, default=d.hidden_units, help="MLP hidden layer width")
    p.add_argument("--dataset", choices=DATASETS, default=d.dataset)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--precision", choices=PRECISIONS, default=d.precision, help="the Keras dtype policy of every layer")
    p.add_argument("--xla", choices=XLA_CHOICES, default=d.xla, help=f"jit_compile: on, off, or {XLA_AUTO_RULE}")
    p.add_argument("--json", metavar="FILE", help="write the sweep's result as JSON to FILE")
    db_flag(p)


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


def format_summary(result) -> str:
    """How many points were measured, and the crossover, in one line."""
    measured = sum(1 for p in result.points if p.samples_per_second)
    total = SweepConfig.from_dict(result.config).progress_total
    return f"{result.status}: {measured} of {total} points measured. {crossover.crossover_sentence(result.points)}"


def cmd_sweep(args: argparse.Namespace) -> int:
    """Time training at each batch size on each device, print a table and the crossover."""
    try:
        config = SweepConfig(**{f.name: getattr(args, f.name) for f in fields(SweepConfig)})
        memory.check(config)  # its largest batch must fit in free memory, said before anything is timed
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    if (code := check_json(args.json)) is not None:
        return code  # before the timing, not after it
    from core.engine.sweep import run_sweep  # TensorFlow loads here, once the flags are known to be good

    run_id = new_run_id()
    try:
        ready(list(config.devices), config.dataset)  # a missing GPU or dataset: one sentence, nothing stored
        store = Store(args.db)  # opened first: an unusable history fails now, not after minutes of timing
    except (StoreError, RuntimeError) as err:
        return fail(str(err))
    width = f" (hidden {config.hidden_units})" if config.model == "mlp" else ""
    steps = f"{config.steps} steps" if config.steps else "about 0.5 s"
    print(
        f"sweep: {config.model}{width} on {', '.join(config.devices)}, batch sizes "
        f"{', '.join(map(str, config.batch_sizes))}; {config.repeats} timed repeats of {steps} each "
        f"after a warm-up, {config.dataset} data",
        flush=True,
    )
    print(without_controls(f"sweep {run_id}, recorded in {store.path} when it ends"), flush=True)
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

    result = run_sweep(config, on_point=on_point, should_stop=stop_on_ctrl_c(), run_id=run_id)
    return save_and_report(Recorder(store, run_id), result, args.json, format_summary, "the sweep failed.")


COMMAND = Command("time training across batch sizes on each device; find where the GPU wins", _sweep_flags, cmd_sweep)
