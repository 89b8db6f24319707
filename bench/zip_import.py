"""Importing a .zip of runs as the History view's uploader does: its time and the memory it takes on top.

Builds a zip of --runs valid run files shaped like the tutorial's (10 epochs of softmax, 25 calls of the step loop
each, what the model learned on the last: its ten 28x28 templates), as several runs picked in History download; by
default 200 of them, about 3.7 MB, as in issue 19. Then, in a fresh process, imports it the way the page does
(core.history.archive, then Store.import_file for each member) into an empty history, and prints the wall
seconds and the peak resident memory over that process's own before-import size. Also a zip bomb (200 members of
6 MB zeros, 1.2 MB zipped): the seconds and the memory until it is refused.

    .venv/bin/python bench/zip_import.py [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.results import CallPoint, Learned  # noqa: E402
from tests.sample_runs import make_result  # noqa: E402


def tutorial_run(i: int):
    """A run file like the tutorial's: 10 epochs, 25 calls each, the softmax templates on the last epoch."""
    rng = random.Random(i)
    run = make_result(run_id=f"zip{i:09d}", epochs=10, seed=i)
    epochs, seconds, samples = [], 0.0, 0
    for e in run.epochs:
        calls = []
        for _ in range(25):
            seconds += 0.2
            samples += 2400
            calls.append(CallPoint(seconds, samples, 24, 0.2 + rng.random() / 50, rng.random(), rng.random()))
        epochs.append(e.__class__(**{**e.__dict__, "calls": calls}))
    smooth = [[min(255, max(0, 128 + int(40 * rng.random()) - 20)) for _ in range(784)] for _ in range(10)]
    strip = list(range(32))
    epochs[-1] = epochs[-1].__class__(
        **{
            **epochs[-1].__dict__,
            "learned": Learned(strip, [k % 10 for k in strip], [rng.randrange(10) for _ in strip], smooth, 0.71),
        }
    )
    run.epochs = epochs
    run.config = {**run.config, "epochs": 10}
    return run


def child(zip_path: str, db: str) -> None:
    """In a fresh process: import the zip into `db`; prints seconds and peak RSS growth as JSON."""
    from core.history.store import Store

    try:
        from core.history.archive import zip_members
    except ImportError:  # a checkout from before issue 19: the page read every member into memory first
        from ui.views import unzip_runs as zip_members

    data = Path(zip_path).read_bytes()
    store = Store(db)
    store.history()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.perf_counter()
    said = []
    try:
        for member in zip_members(data):
            name, content, problem = member if isinstance(member, tuple) else (member.name, member.data, member.problem)
            if problem:
                said.append(f"{name}: {problem}")
                continue
            try:
                said.append(store.import_file(content).added)
            except ValueError as err:  # RunFileError: one sentence for this member
                said.append(f"{name}: {err}")
    except ValueError as err:
        said.append(str(err))
    took = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": took,
                "extra_mb": (peak - before) / 1024,
                "said": said[:1] + said[-1:],
                "imported": sum(1 for s in said if s is True),
            }
        )
    )


def measure(zip_path: Path, tmp: Path) -> dict:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from bench.zip_import import child; child(sys.argv[1], sys.argv[2])"
    )
    db = tmp / f"{zip_path.stem}.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", code, str(zip_path), str(db)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        good = tmp / "runs.zip"
        with zipfile.ZipFile(good, "w", zipfile.ZIP_DEFLATED) as z:
            for i in range(args.runs):
                z.writestr(f"run-zip{i:09d}.json", tutorial_run(i).to_json())
        bomb = tmp / "bomb.zip"
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            for i in range(200):
                z.writestr(f"big-{i}.json", b"0" * 6_000_000)
        unzipped = sum(m.file_size for m in zipfile.ZipFile(good).infolist()) / 1e6
        print(
            f"zip of {args.runs} runs: {good.stat().st_size / 1e6:.1f} MB ({unzipped:.1f} MB unzipped); "
            f"bomb: {bomb.stat().st_size / 1e6:.1f} MB (1,200 MB unzipped)"
        )
        runs = measure(good, tmp)
        print(
            f"{runs['imported']} of {args.runs} runs imported in {runs['seconds']:.2f} s, "
            f"peak memory +{runs['extra_mb']:.0f} MB"
        )
        refused = measure(bomb, tmp)
        print(
            f"bomb: {refused['seconds']:.2f} s, peak memory +{refused['extra_mb']:.0f} MB; first said: "
            f"{refused['said'][0]}; last: {refused['said'][-1]}"
        )
        print(f"zip_import_seconds: {runs['seconds']:.2f}")
        print(f"zip_import_extra_mb: {runs['extra_mb']:.0f}")


if __name__ == "__main__":
    main()
