"""Naming a Ray cluster: bad addresses get one sentence in bounded time, and without one nothing imports Ray."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from core.cluster import connect
from tests.conftest import ROOT, run_cli


def closed_port() -> int:
    """A port nothing listens on: bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("text", ["bogus", "gpu-box", "ray://gpu-box", "gpu-box:0", "gpu-box:99999", "http://h:1"])
def test_a_malformed_address_names_the_setting_and_the_forms(text):
    with pytest.raises(connect.ClusterError, match=r"TFDASH_RAY_ADDRESS \(or --ray\) must be auto, HOST:PORT"):
        connect.parse(text)


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("nowhere.invalid:6379", "The Ray cluster's host 'nowhere.invalid' (TFDASH_RAY_ADDRESS) is not known here."),
        ("127.0.0.1:{port}", "Nothing listens at 127.0.0.1:{port} (TFDASH_RAY_ADDRESS)"),
        ("ray://127.0.0.1:{port}", "Nothing listens at 127.0.0.1:{port} (TFDASH_RAY_ADDRESS)"),
    ],
)
def test_a_wrong_host_or_a_closed_port_is_one_sentence_on_the_cli(address, says):
    port = closed_port()
    began = time.monotonic()
    done = run_cli("devices", "--ray", address.format(port=port), timeout=60)  # the bound: never a hang
    print(f"{address}: answered in {time.monotonic() - began:.1f} s")
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {says.format(port=port)}" or done.stderr.startswith(
        f"error: {says.format(port=port)}"
    )
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_without_a_cluster_named_nothing_imports_ray():
    code = (
        "import sys, core.cli, core.runner, core.machine.hardware_check, core.engine.kinds,"
        " ui.train, ui.devices, ui.resources;"
        "from core.cli.devices import cmd_devices; print('ray' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != connect.ADDRESS_ENV}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr[-500:]
    # `python -m core train`, start to finish: -X importtime lists every module it imported (TensorFlow's own
    # import is hidden with the rest of its start-up chatter: core.engine.tf_setup).
    imported = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "core",
            "train",
            "--dataset",
            "synthetic",
            "--train-subset",
            "100",
            "--batch-size",
            "50",
            "--epochs",
            "1",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert imported.returncode == 0, imported.stderr[-500:]
    assert any(line.rstrip().endswith("| core.engine.training") for line in imported.stderr.splitlines())
    assert not [line for line in imported.stderr.splitlines() if line.rstrip().endswith(("| ray", "| ray._raylet"))]


def test_an_unreachable_cluster_is_one_sentence_on_the_devices_view(monkeypatch):
    from core.machine import hardware_check
    from core.settings import device_modes
    from tests.test_app import page
    from ui import run_text

    port = closed_port()
    monkeypatch.setenv(connect.ADDRESS_ENV, f"127.0.0.1:{port}")
    monkeypatch.setattr(
        hardware_check, "_cluster", hardware_check.ClusterProber()
    )  # a fresh check of this address, not an earlier one
    hardware_check.start()
    hw = hardware_check.wait_cluster(30)
    says = f"Nothing listens at 127.0.0.1:{port} (TFDASH_RAY_ADDRESS)"
    assert hw.cluster.startswith(says) and hw.cluster.endswith("Only this machine's devices are offered.")
    assert hw.nodes == () and not [m for m in device_modes.modes(hw) if "/" in m.key]
    devices = page("Devices")
    assert any(c.value.startswith(run_text.plain(says)) for c in devices.caption) and not devices.exception
