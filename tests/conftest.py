"""Shared fixtures. CI sets CI=true: there a missing dependency fails instead of skipping."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


def require(condition: bool, what: str) -> None:
    """Skip on a developer machine without `what`; fail loudly in CI, where it must be installed."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is missing in CI; .ci/run must install it.")
    pytest.skip(f"{what} is not installed here (make system-deps installs it).")


@pytest.fixture(scope="session")
def fashion_mnist():
    """The real Fashion-MNIST, from Debian's dataset-fashion-mnist or Keras' cache."""
    from core.engine import data

    require(data.availability("fashion_mnist").available, "Fashion-MNIST (apt-get install dataset-fashion-mnist)")
    return data.load("fashion_mnist")


def wait_until(condition: Callable[[], object], timeout: float = 120.0, what: str = "it", every: float = 0.02):
    """Poll `condition()` every `every` s until it is true and return its value; fail if `what` takes over `timeout` s.

    A condition may assert too (a process still alive): its failure is the test's, at once.
    """
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout:g} s"
        time.sleep(every)
    return value


def run_cli(*args: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    """Run `python -m core ARGS` from the repository root: forked from this process's zygote (TensorFlow imported
    once, tests/forked.py), or a fresh interpreter where `env` changes what imports read (KERAS_HOME...)."""
    from core.engine.kinds import PRELOAD
    from tests import forked

    return forked.run(PRELOAD, "core", args, env={**os.environ, **(env or {})}, cwd=ROOT, timeout=timeout)


def cli_process(*args: str, env: dict | None = None):
    """`python -m core ARGS` running, from the repository root, held as subprocess.Popen(stdout=PIPE, stderr=PIPE,
    text=True) holds one: forked as run_cli's are (tests/forked.py)."""
    from core.engine.kinds import PRELOAD
    from tests import forked

    return forked.popen(PRELOAD, "core", args, env={**os.environ, **(env or {})}, cwd=ROOT)


SHARED_WORKER_JOBS = 25  # jobs a shared worker runs before a fresh one takes over (its memory grows a little per job)


@pytest.fixture(autouse=True, scope="session")
def _private_history(tmp_path_factory):
    """Every test, and every process a test starts, records runs in a throwaway history file. The page's runner
    in this process (AppTest) keeps one warm worker, not two: each run of theirs would wait for two start-ups
    (the pool is tested in tests/test_pool.py; the browser tests' server keeps the real default). Its workers warm up
    by importing TensorFlow only: the default dataset and a tiny training (3-5 s a worker here) bought the first job
    nothing measurable, and most jobs here are synthetic (the browser tests' servers keep the real warm-up)."""
    os.environ["TFDASH_DB"] = str(tmp_path_factory.mktemp("history") / "runs.sqlite3")
    os.environ["TFDASH_WARM_WORKERS"] = "1"
    os.environ["TFDASH_WARM_UP"] = "import"
    # The page's runner here and the session's (session_runner) give a worker whose job ended cleanly the next job:
    # one TensorFlow import for many tests' jobs. Tests of a worker's own life make Runners of their own (default 1).
    os.environ["TFDASH_WORKER_JOBS"] = str(SHARED_WORKER_JOBS)
    yield


@pytest.fixture(autouse=True, scope="session")
def _one_hardware_check(tmp_path_factory):
    """This machine's hardware check, made once for the whole run (both xdist workers) and read by every server and
    page the tests start (core.machine.hardware_check.ANSWER_ENV): each check imports TensorFlow and measures the peak
    and bandwidth, 10-16 s of CPU, and the tests started about 18. The check itself still runs where a test is about it
    (a page's first render in tests/test_app.py, which reads its answer too; the `make run` servers of the browser
    tests, whose page waits for it); tests/test_cli.py reads this one's `devices --json` (hardware_check_run)."""
    from core.engine.limits import LIMITS_ENV
    from core.machine.hardware_check import ANSWER_ENV

    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared  # one folder for every worker
    answer, run = shared / "hardware-check.json", shared / "hardware-check-run.json"
    with open(shared / "hardware-check.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the first one's check
        if not run.exists():
            done = run_cli("devices", "--json", env={LIMITS_ENV: ""})
            said = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
            run.write_text(json.dumps(said), encoding="utf-8")
            with contextlib.suppress(ValueError):  # no answer to share: every check runs (its tests say why)
                json.loads(done.stdout)
                answer.write_text(done.stdout, encoding="utf-8")
    if answer.exists():
        os.environ[ANSWER_ENV] = str(answer)
    yield json.loads(run.read_text(encoding="utf-8"))


@pytest.fixture
def hardware_check_run(_one_hardware_check) -> dict:
    """The session's `python -m core devices --json` (a fresh interpreter measuring this machine's devices): its
    returncode, stdout and stderr."""
    return _one_hardware_check


@pytest.fixture(scope="session")
def session_runner():
    """One Runner of the engine's jobs for the session (tests/ borrow it through `shared_runner`): each test's job takes
    the worker that started warming up when the previous test's job ended, where a Runner per test waited for its own
    and killed the next one half-warm at its close. Not ui.resources.get_runner(): that one records into the page's
    history."""
    from core.engine.kinds import JOB_KINDS
    from core.runner import Runner

    with Runner(JOB_KINDS, worker_jobs=SHARED_WORKER_JOBS) as runner:
        yield runner


@contextmanager
def borrowed(runner):
    """The runner, given back as it was lent: the listeners added meanwhile removed, any job left stopped and ended."""
    listeners = list(runner._listeners)
    try:
        yield runner
    finally:
        left = [status.run_id for status in runner.jobs()]
        for run_id in left:
            runner.cancel(run_id, by="the end of its test")
        for run_id in left:
            runner.wait(run_id, 60)
        runner._listeners[:] = listeners


@pytest.fixture
def shared_runner(session_runner):
    """The session's Runner (JOB_KINDS, one warm worker), lent to one test."""
    with borrowed(session_runner) as runner:
        yield runner


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (report_setup, report_call), for fixtures that look back."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


# Under pytest-xdist (make test: -n 2 --dist loadgroup) a group runs whole on one worker: the browser tests one after
# another (each server trains, and they share artifacts/), the Ray clusters likewise; any other module is a group
# of its own, so its module-scoped fixtures (a trained model, a server) are made once, not once per worker.
SHARED_GROUPS = {"browser": "browser", "ray": "ray"}


# The longest groups first: xdist hands out groups in collection order, and the browser group (about a quarter of the
# suite) handed out last ran alone on one worker while the other had finished.
FIRST_GROUPS = ("browser", "ray")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Give every test its xdist group (before xdist reads them), the longest groups first; then drop the gpu tests
    unless asked for."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            shared = next((group for mark, group in SHARED_GROUPS.items() if mark in item.keywords), None)
            item.add_marker(pytest.mark.xdist_group(shared or item.module.__name__))
    rank = {group: i for i, group in enumerate(FIRST_GROUPS)}

    def group(item) -> str:
        mark = item.get_closest_marker("xdist_group")
        return mark.args[0] if mark.args else mark.kwargs.get("name", "")

    items.sort(key=lambda item: rank.get(group(item), len(rank)))  # stable: each group's own order kept
    _deselect_gpu(config, items)


def _deselect_gpu(config, items):
    """Tests marked gpu run only when asked for (-m gpu, as make gpu-check does); there they fail without a GPU."""
    if "gpu" in (config.option.markexpr or ""):
        return
    kept = [item for item in items if "gpu" not in item.keywords]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if "gpu" in item.keywords])
        items[:] = kept
