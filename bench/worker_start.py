"""A worker's start: forked from the zygote (core.spawn.zygote), a fresh interpreter and the standard library's
forkserver with TensorFlow and Keras preloaded (multiprocessing.set_forkserver_preload), alternating, same run.

Each worker warms up as the tests' do (TFDASH_WARM_UP=import: TensorFlow and Keras imported, then ready) and then
trains the same tiny run; the bench prints the seconds from Worker() to Ready and the CPU seconds the machine spent
on it (this process's children, from /proc), for each way, and the ratios fresh / forked. The zygote's own import is
paid once, before the first forked worker, and is not counted: the server pays it once in its life; so is the
forkserver's. The forkserver's threads after its preload are counted too (a fork is only safe with one: it has no
guard of its own).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["TFDASH_WARM_UP"] = "import"

from core.engine.kinds import JOB_KINDS, PRELOAD, warm_up  # noqa: E402
from core.runner.protocol import Done, Start  # noqa: E402
from core.runner.worker import Worker  # noqa: E402
from core.settings.config import TrainConfig  # noqa: E402
from core.spawn import zygote  # noqa: E402

TINY = TrainConfig(dataset="synthetic", train_subset=500, batch_size=50, epochs=1)


def children_cpu() -> float:
    """CPU seconds of this process's reaped children and its zygote's (both cumulative)."""
    hz = os.sysconf("SC_CLK_TCK")
    total = os.times().children_user + os.times().children_system
    if zygote._zygote is not None:
        fields = open(f"/proc/{zygote._zygote.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15]) / hz  # its own and reaped
    return total


def one(forked: bool) -> tuple[float, float]:
    """Seconds and CPU seconds from Worker() to Ready, then the tiny job to its end."""
    os.environ[zygote.USE_ENV] = "1" if forked else "0"
    cpu, start = children_cpu(), time.perf_counter()
    worker = Worker([warm_up], 1, PRELOAD)
    assert worker.wait_ready(300), "the worker died starting up"
    ready = time.perf_counter() - start
    worker.send(Start(JOB_KINDS[TrainConfig].run, TINY, "bench"))
    while not isinstance(message := worker.receive(60), Done):
        assert message is not None, "the job did not answer in 60 s"
    assert message.state == "completed", message
    worker.close()
    return ready, children_cpu() - cpu


def _served(pipe) -> None:
    """A forkserver's child: warm up as a worker does, say so, then run the tiny job and send its epochs' count."""
    warm_up()
    pipe.send("ready")
    result = JOB_KINDS[TrainConfig].run(TINY, lambda item, result: None, lambda: False, "bench")
    pipe.send(len(result.epochs))


def served(context) -> tuple[float, float]:
    """Seconds from Process.start() to ready, and CPU seconds of the forkserver's child (it is not ours to reap)."""
    ours, theirs = context.Pipe()
    start = time.perf_counter()
    child = context.Process(target=_served, args=(theirs,))
    child.start()
    assert ours.poll(300) and ours.recv() == "ready", "the forkserver's child did not get ready"
    ready = time.perf_counter() - start
    assert ours.poll(120), "the tiny job did not end in 120 s"
    epochs = ours.recv()
    try:  # still alive (it sent its last word): its own user and system ticks
        fields = open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()
        used = sum(int(f) for f in fields[11:13]) / os.sysconf("SC_CLK_TCK")
    except FileNotFoundError:
        used = float("nan")
    child.join(30)
    assert epochs == TINY.epochs, f"the tiny job trained {epochs} epochs"
    return ready, used


def forkserver_threads() -> str:
    """The forkserver process's threads now, by name (one is the only number a fork is safe with)."""
    from multiprocessing import forkserver

    tasks = f"/proc/{forkserver._forkserver._forkserver_pid}/task"
    names = [open(f"{tasks}/{t}/comm").read().strip() for t in sorted(os.listdir(tasks))]
    return f"{len(names)} ({', '.join(names)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    one(True)  # the zygote's import, once
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tensorflow", "keras", "core.engine.kinds"])
    served(context)  # the forkserver's import, once
    print(f"forkserver threads after its preload: {forkserver_threads()}")
    ways = {"fresh": lambda: one(False), "forked": lambda: one(True), "forkserver": lambda: served(context)}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, way in ways.items():
            ready, used = way()
            seconds[name].append(ready)
            cpu[name].append(used)
    for name in ways:
        print(
            f"{name:10s}: ready in {statistics.median(seconds[name]):6.2f} s, "
            f"CPU {statistics.median(cpu[name]):6.2f} s a worker (ready and its tiny job)"
        )
    fresh = statistics.median(seconds["fresh"])
    print(f"start_fresh_vs_forked: {fresh / statistics.median(seconds['forked']):.1f}")
    print(f"start_fresh_vs_forkserver: {fresh / statistics.median(seconds['forkserver']):.1f}")
    print(f"cpu_fresh_vs_forked: {statistics.median(cpu['fresh']) / statistics.median(cpu['forked']):.1f}")
    print(f"forkserver threads after its children: {forkserver_threads()}")


if __name__ == "__main__":
    main()
