"""python -m core compare --axis precision --values float32,mixed_bfloat16 [train flags]: one run per value, then the
ratios.

The runs train one after another with the same seed and every other setting shared, as the page's
"Compare along" does; they are stored as one group (run ids GROUP-1, GROUP-2, ...) like the page's runs.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

from core.analysis import compare
from core.cli.common import EXIT_USAGE, Command, check_json, db_flag, fail, stop_on_ctrl_c, write_json
from core.cli.train import add_train_flags, config_from_args, epoch_printer, ready
from core.engine import memory
from core.history.recorder import Recorder
from core.history.store import Store, StoreError
from core.machine import busy
from core.results.states import State
from core.settings.axes import AXES, Comparison
from core.settings.config import ConfigError


def ratio_lines(results, names: list[str]) -> list[str]:
    """The ratio table: each value's steady samples/s and its speedup over the first value's, with its interval."""
    lines = [f"{'value':<24} {'samples/s':>12} {'speedup vs ' + names[0]:>26}"]
    for name, (rate, ratio) in zip(names, compare.ratio_rows(results), strict=True):
        lines.append(f"{name:<24} {rate:>12} {ratio:>26}")
    lines.append("speedup: steady-state training samples per second (epochs 2+) over the first value's; 90% interval")
    lines.append("the interval covers this comparison's steady epochs and calls, not repeated comparisons")
    if (said := busy.busy_sentence(results)) is not None:
        lines.append(said)
    if (target := compare.default_target(results)) is not None:  # the page's default for these runs
        times = [compare.time_to_accuracy(r, target) for r in results]
        said = ", ".join(
            f"{n} {'not reached' if t is None else f'{t:.2f} s'}" for n, t in zip(names, times, strict=True)
        )
        lines.append(f"time to {target:.0%} test accuracy ({compare.TARGET_RULE}): {said}")
    return lines


def json_path(stem: str | None, name: str) -> str | None:
    """--json out.json -> out-mixed_bfloat16.json: one importable run file per value."""
    if not stem:
        return None
    path = Path(stem)
    slug = "".join(ch if ch.isalnum() or ch in "._" else "-" for ch in name)
    return str(path.with_name(f"{path.stem}-{slug}{path.suffix or '.json'}"))


def cmd_compare(args: argparse.Namespace) -> int:
    """Train one run per value of the axis, then print the ratio table."""
    try:
        comparison = Comparison(args.axis, args.values)
        configs, names = comparison.configs(config_from_args(args).to_dict()), comparison.names()
        for config in configs:
            memory.check(config)
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    if (code := check_json(json_path(args.json, names[0]))) is not None:
        return code  # before the training, not after it
    from core.engine.training import train  # TensorFlow loads here, once the flags are known to be good

    try:
        ready([c.device for c in configs], configs[0].dataset, configs[0])  # before the history holds a row
        store = Store(args.db)
    except (StoreError, RuntimeError) as err:
        return fail(str(err))
    results, group = [], uuid.uuid4().hex[:8]
    stop = stop_on_ctrl_c()
    for i, (config, name) in enumerate(zip(configs, names, strict=True), 1):
        run_id = f"cmp{group}-{i}"
        recorder = Recorder(store, run_id, config)
        try:
            recorder.begin()
        except StoreError as err:
            return fail(str(err))
        print(f"{args.axis} = {name}: run {run_id}", flush=True)
        result = train(config, on_epoch=epoch_printer(recorder, config.epochs), should_stop=stop, run_id=run_id)
        results.append(result)
        if (unsaved := recorder.finish(result)) is not None:
            return fail(f"{unsaved}{recorder.kept()}")
        if (code := write_json(json_path(args.json, name), result)) is not None:
            return code
        if result.status != State.COMPLETED:
            return fail(f"{args.axis} = {name}: {result.error or result.status}; the comparison stops here.")
    print("\n".join(ratio_lines(results, names)))
    return 0


def _compare_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--axis", required=True, choices=list(AXES), help="the one setting the runs differ in")
    p.add_argument("--values", required=True, help="2 to 4 comma-separated values, the first is the reference")
    add_train_flags(p)
    p.add_argument("--json", metavar="FILE", help="write each run as JSON: FILE-<value>.json")
    db_flag(p)


COMMAND = Command("train one run per value of an axis and print their ratios", _compare_flags, cmd_compare)
