"""Jobs in worker processes: memory goes back after each, a killed worker or a step that ignores Stop is handled.

Real processes and the real engine on small synthetic data; each worker imports TensorFlow (seconds).
"""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest

from core.history.store import Store, attach
from core.language import i18n
from core.runner import Runner, end_messages
from core.runner.protocol import STOP_GRACE_SECONDS
from core.settings.config import TrainConfig
from tests.conftest import ROOT, wait_until

# Five runs of different sizes (each a new dataset size and seed: in-process, ~650 MB each for good).
MEMORY_SCRIPT = """
import json, sys
from core.settings.config import TrainConfig
from core.engine.kinds import JOB_KINDS
from core.history.store import Store, attach
from core.runner import Runner

def rss():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS:")).split()[1]) * 1024

runner = Runner(JOB_KINDS)
attach(runner, Store(sys.argv[1]))
idle = rss()
states = []
for i, (model, size) in enumerate([("softmax", 1000), ("mlp", 3000), ("cnn", 600), ("mlp", 6000), ("softmax", 9000)]):
    config = TrainConfig(dataset="synthetic", model=model, train_subset=size, batch_size=100, epochs=1, seed=i)
    states.append(runner.wait(runner.submit(config), timeout=300).state)
after = rss()
print(json.dumps({"idle": idle, "after": after, "states": states, "tf": "tensorflow" in sys.modules}))
runner.close()
"""


def test_the_server_process_memory_returns_to_idle_after_five_runs_of_different_sizes(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, str(tmp_path / "runs.sqlite3")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["states"] == ["completed"] * 5
    assert not report["tf"]  # TensorFlow lives only in the workers
    grew = report["after"] - report["idle"]
    assert grew < 200 * 2**20, f"the server grew {grew / 2**20:.0f} MB over its idle size"


def test_a_worker_killed_mid_run_leaves_the_job_interrupted_and_the_queue_goes_on(tmp_path, shared_runner):
    runner = shared_runner
    store = Store(tmp_path / "runs.sqlite3")
    attach(runner, store)
    long_run = TrainConfig(dataset="synthetic", train_subset=2000, batch_size=1, model="mlp", epochs=50)
    assert runner.warm(180)
    pid = runner._pool.first().pid  # the waiting worker takes the job: what the kernel's OOM killer would pick
    killed = runner.submit(long_run)
    after = runner.submit(TrainConfig(dataset="synthetic", train_subset=500, batch_size=50, epochs=2))
    wait_until(lambda: runner.status(killed).done >= 1, 180, "epoch 1", every=0.01)
    os.kill(pid, signal.SIGKILL)

    final = runner.wait(killed, timeout=30)
    assert final.state == "interrupted", final
    done = final.done
    assert final.error == (
        f"The worker process (pid {pid}) was killed (SIGKILL, often the system running out of memory) "
        f"after epoch {done}; {done} epoch{'s' if done != 1 else ''} kept."
    )
    i18n.set_language("zh")  # the page reads the runner's English sentence back in its language
    try:
        said = i18n.again(final.error, end_messages.ALL)
    finally:
        i18n.set_language("en")
    assert (
        said == f"工作进程（PID {pid}）被终止（SIGKILL，常因系统内存不足），在第 {done} 轮之后；保留了 {done} 轮。"
    ), said
    stored = store.get(killed)
    assert stored.status == "interrupted" and stored.error == final.error
    assert [m.epoch for m in stored.epochs] == list(range(1, done + 1)) and stored.epochs == list(final.items)
    assert stored.host.get("hostname")  # not "?": the host arrived with the first epoch

    nxt = runner.wait(after, timeout=180)
    assert nxt.state == "completed" and store.get(after).status == "completed"


@dataclass(frozen=True)
class StubbornConfig:
    """A job whose one long step never looks at should_stop: CNN batch 32768, ~12 s a step, in miniature."""

    seconds: float


@dataclass
class StubbornResult:
    items: int
    status: str = "running"
    error: str | None = None
    finished_at: str | None = None


def stubborn(config: StubbornConfig, on_item, should_stop, run_id: str) -> StubbornResult:
    """Finish one item, then a step that ignores Stop."""
    on_item(1, StubbornResult(1))
    time.sleep(config.seconds)
    return StubbornResult(2, status="completed")


def test_a_step_that_outlasts_the_grace_period_is_stopped_by_ending_the_worker():
    runner = Runner({StubbornConfig: stubborn})
    try:
        run_id = runner.submit(StubbornConfig(seconds=120))
        wait_until(lambda: runner.status(run_id).done >= 1, 120, "the job's first item", every=0.01)
        began = time.monotonic()
        assert runner.cancel(run_id, by="Ctrl-C")
        final = runner.wait(run_id, timeout=30)
        took = time.monotonic() - began
        assert final.state == "cancelled" and final.stopped_by == "Ctrl-C"
        assert final.items == (1,) and final.result.status == "cancelled" and final.result.finished_at
        # Ended after the grace period, long before its 120 s step would have ended (the wait's 30 s say so).
        assert took >= STOP_GRACE_SECONDS, took
    finally:
        runner.close()


def test_a_job_kind_that_cannot_cross_to_a_worker_is_refused_when_the_runner_is_made():
    with pytest.raises(TypeError, match="The job for StubbornConfig must be a module-level function"):
        Runner({StubbornConfig: lambda config, on_item, should_stop, run_id: None})
