"""A worker's start: forked from the zygote (core.spawn.zygote) against a fresh interpreter, alternating, same run.

Each worker warms up as the tests' do (TFDASH_WARM_UP=import: TensorFlow and Keras imported, then ready) and then
trains the same tiny run; the bench prints the seconds from Worker() to Ready and the CPU seconds the machine spent
on it (this process's children, from /proc), for each way, and the ratios fresh / forked. The zygote's own import is
paid once, before the first forked worker, and is not counted: the server pays it once in its life.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["TFDASH_WARM_UP"] = "import"

from core.config import TrainConfig  # noqa: E402
from core.engine.kinds import JOB_KINDS, PRELOAD, warm_up  # noqa: E402
from core.runner.protocol import Done, Start  # noqa: E402
from core.runner.worker import Worker  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    one(True)  # the zygote's import, once
    seconds: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeats):
        for forked in (False, True):
            ready, used = one(forked)
            seconds[forked].append(ready)
            cpu[forked].append(used)
    for forked, name in ((False, "fresh"), (True, "forked")):
        print(
            f"{name:6s}: ready in {statistics.median(seconds[forked]):6.2f} s, "
            f"CPU {statistics.median(cpu[forked]):6.2f} s a worker (ready and its tiny job)"
        )
    print(f"start_fresh_vs_forked: {statistics.median(seconds[False]) / statistics.median(seconds[True]):.1f}")
    print(f"cpu_fresh_vs_forked: {statistics.median(cpu[False]) / statistics.median(cpu[True]):.1f}")


if __name__ == "__main__":
    main()
