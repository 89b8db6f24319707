"""How the history's list scales: 2,000 runs x 1,000 epochs (each run's file under the upload limit); and what one
epoch's write costs at epoch 1,000 against epoch 10 (`add_epoch_1000_vs_10`: the store keeps a run's summary as
its epochs arrive, so this stays near 1).

Builds the file straight into the current schema with executemany (every run gets the same realistic
epochs; its summary columns computed by core.history.summary, as the store computes them), then prints the
time of Store.history() and of `python -m core history`, each as a ratio against listing a 100-run file
measured in the same run. A page rerun calls Store.history() and loads only the runs on screen.

    .venv/bin/python bench/history_scale.py [--runs 2000] [--epochs 1000] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.history import summary  # noqa: E402
from core.history.store import Store  # noqa: E402
from tests.sample_runs import SERVER_DEVICE, SERVER_HOST, make_result  # noqa: E402


def build(path: Path, runs: int, epochs: int) -> None:
    """A history of `runs` training runs of `epochs` epochs each."""
    Store(path).close()  # the current schema
    template = make_result(epochs=epochs)
    metrics = [json.dumps(asdict(m)) for m in template.epochs]
    done, accuracy, steady = summary.summarise(template.epochs)
    config = json.dumps({**template.config, "epochs": epochs})
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")
    with db:
        db.executemany(
            "INSERT INTO runs (run_id, status, schema_version, config, host, device, started_at, finished_at,"
            " stored_at, origin, epochs_done, final_test_accuracy, steady_epoch_seconds)"
            " VALUES (?, 'completed', 1, ?, ?, ?, ?, ?, ?, 'imported', ?, ?, ?)",
            [
                (
                    f"run{i:09d}",
                    config,
                    json.dumps(SERVER_HOST),
                    json.dumps(SERVER_DEVICE),
                    f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:00:{i % 60:02d}.000+00:00",
                    template.finished_at,
                    template.finished_at,
                    done,
                    accuracy,
                    steady,
                )
                for i in range(runs)
            ],
        )
        for i in range(runs):
            run_id = f"run{i:09d}"
            db.executemany(
                "INSERT INTO epochs (run_id, epoch, metrics) VALUES (?, ?, ?)",
                [(run_id, k + 1, m) for k, m in enumerate(metrics)],
            )
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def best_of(fn, repeats: int = 5) -> float:
    """The fastest of `repeats` timings: the least disturbed by other work on a shared machine."""
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def cli_seconds(path: Path) -> float:
    """Wall seconds of `python -m core history` on the file, best of 3 (interpreter start-up included)."""
    argv = [sys.executable, "-m", "core", "history", "--db", str(path)]
    return best_of(lambda: subprocess.run(argv, cwd=ROOT, capture_output=True, check=True), 3)


def add_epoch_seconds(tmp: Path, epochs: int = 1000, around: tuple[int, ...] = (10, 1000)) -> dict[int, float]:
    """Median seconds of Store.add_epoch over the 10 epochs up to each of `around`, as a run records them."""
    from tests.sample_runs import make_result

    run = make_result(run_id="grow00000001", epochs=epochs)
    with Store(tmp / "grow.sqlite3") as store:
        store.begin(run.run_id, run.config)
        took: dict[int, list[float]] = {n: [] for n in around}
        for m in run.epochs:
            partial = type(run)(**{**run.__dict__, "epochs": run.epochs[: m.epoch], "status": "running"})
            began = time.perf_counter()
            store.add_epoch(run.run_id, m, partial)
            elapsed = time.perf_counter() - began
            for n in around:
                if n - 10 < m.epoch <= n:  # the 10 epochs up to n
                    took[n].append(elapsed)
    return {n: statistics.median(v) for n, v in took.items()}


def main() -> None:
    """Build both files, list them, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--dir", default=None, help="where to build the files (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        big, small = Path(tmp) / "big.sqlite3", Path(tmp) / "small.sqlite3"
        began = time.perf_counter()
        build(big, args.runs, args.epochs)
        built = time.perf_counter() - began
        build(small, 100, args.epochs)
        size = os.path.getsize(big) / 1e6
        print(f"built {args.runs} runs x {args.epochs} epochs ({size:,.0f} MB) in {built:.1f} s")
        with Store(big) as store_big, Store(small) as store_small:
            assert len(store_big.history()) == args.runs
            ref = best_of(store_small.history)
            listing = best_of(store_big.history)
            on_screen = [r.run_id for r in store_big.history()[:20]]
            load = best_of(lambda: store_big.load(on_screen))
        cli_ref, cli_big = cli_seconds(small), cli_seconds(big)
        print(f"Store.history(), 100 runs (reference):   {ref * 1e3:8.1f} ms")
        print(
            f"Store.history(), {args.runs} runs:           {listing * 1e3:8.1f} ms"
            f"  = {listing / ref:5.1f}x the reference"
        )
        print(f"Store.load(20 runs on screen):          {load * 1e3:8.1f} ms")
        print(f"python -m core history, 100 runs:        {cli_ref:8.2f} s")
        print(f"python -m core history, {args.runs} runs:      {cli_big:8.2f} s  = {cli_big / cli_ref:5.2f}x")
        print(f"per-run list cost: {statistics.mean([listing / args.runs, ref / 100]) * 1e6:.1f} us")
        grow = add_epoch_seconds(Path(tmp))
        print(f"Store.add_epoch at epoch 10: {grow[10] * 1e3:.2f} ms, at epoch 1,000: {grow[1000] * 1e3:.2f} ms")
        print(f"add_epoch_1000_vs_10: {grow[1000] / grow[10]:.2f}")


if __name__ == "__main__":
    main()
