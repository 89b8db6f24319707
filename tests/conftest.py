"""Shared fixtures. CI sets CI=true: there a missing dependency fails instead of skipping."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
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
    """Run `python -m core ARGS` in a fresh interpreter, from the repository root."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(autouse=True, scope="session")
def _private_history(tmp_path_factory):
    """Every test, and every process a test starts, records runs in a throwaway history file. The page's runner
    in this process (AppTest) keeps one warm worker, not two: each run of theirs would wait for two start-ups
    (the pool is tested in tests/test_pool.py; the browser tests' server keeps the real default)."""
    os.environ["TFDASH_DB"] = str(tmp_path_factory.mktemp("history") / "runs.sqlite3")
    os.environ["TFDASH_WARM_WORKERS"] = "1"
    yield


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (report_setup, report_call), for fixtures that look back."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def pytest_collection_modifyitems(config, items):
    """Tests marked gpu run only when asked for (-m gpu, as make gpu-check does); there they fail without a GPU."""
    if "gpu" in (config.option.markexpr or ""):
        return
    kept = [item for item in items if "gpu" not in item.keywords]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if "gpu" in item.keywords])
        items[:] = kept
