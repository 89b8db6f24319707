"""Ray cluster nodes with a real local cluster (ray.cluster_utils.Cluster): a head and a second node in local processes.

One cluster for the module (starting one costs 10-20 s here); the tests run in order and the last
one removes the second node. Every job goes through the real Runner and Store, as the page's do.
"""

from __future__ import annotations

import secrets
import time

import pytest

from core.history.store import Store, attach
from core.settings.config import TrainConfig
from tests.conftest import borrowed, require, wait_until

pytestmark = pytest.mark.ray

# Batch 1 on 1,000 samples: an epoch of a few tenths of a second, so Stop and a node's removal land mid-run.
SLOW = dict(dataset="synthetic", train_subset=1000, batch_size=1, model="mlp", epochs=60)
QUICK = dict(dataset="synthetic", train_subset=1000, batch_size=50, epochs=2)


@pytest.fixture(scope="module")
def cluster():
    """A head ('head-a') and a second node ('node-b'), one CPU each, with token authentication (as
    `python -m core cluster-head` starts one; a cluster without it is refused), this process connected as the driver."""
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        require(False, "Ray (pip install -r requirements.txt)")
    from core.cluster import connect

    with pytest.MonkeyPatch.context() as env:  # the cluster's processes and this driver share the token
        env.setenv("RAY_AUTH_MODE", "token")
        env.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
        from ray._private.authentication_test_utils import reset_auth_token_state

        reset_auth_token_state()  # this process read RAY_AUTH_MODE when Ray was imported: read it again
        made = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_name": "head-a"})
        second = made.add_node(num_cpus=1, node_name="node-b")
        made.wait_for_nodes()
        connect.connect(made.address)
        assert connect.warning() is None  # token authentication: nothing to warn about
        yield made, second
        connect.disconnect()
        made.shutdown()
    reset_auth_token_state()


@pytest.fixture(scope="module")
def recorded(cluster, tmp_path_factory, session_runner):
    """The shared runner for the module, its jobs recorded in a fresh store."""
    store = Store(tmp_path_factory.mktemp("ray") / "runs.sqlite3")
    with borrowed(session_runner) as runner:
        attach(runner, store)
        yield runner, store
    store.close()


def stored_epochs(store: Store, run_id: str) -> int:
    result = store.get(run_id)
    return len(result.epochs) if result else 0


def test_every_node_lists_its_devices_in_the_devices_view_and_the_device_choices(cluster, monkeypatch):
    from core.cluster import connect, nodes
    from core.machine import hardware_check
    from core.settings import device_modes
    from tests.test_app import page

    made, _ = cluster
    monkeypatch.setenv(connect.ADDRESS_ENV, made.address)
    hardware_check.start()  # the page's check: this machine in a subprocess, the cluster's nodes on a thread
    hw = hardware_check.wait_cluster(150)
    assert [n["name"] for n in hw.nodes] == ["head-a", "node-b"]  # the head first
    for node in hw.nodes:
        assert node["message"] == "", node["message"]
        assert node["host"]["hostname"] and node["host"]["tensorflow"] and node["host"]["cpu_cores"] >= 1
    assert hw.nodes[1]["node_id"] == nodes.find("node-b").node_id != hw.nodes[0]["node_id"]
    host = hw.nodes[1]["host"]["hostname"]
    assert hw.host["hostname"] == host  # this machine's own check lists this machine, not the cluster
    by_key = {m.key: m for m in device_modes.modes(hw)}
    assert by_key["node-b/cpu"].label == f"node-b/CPU · {host}" and not device_modes.unavailable(
        by_key["node-b/cpu"], hw
    )
    assert by_key["cpu-vs-node-b/cpu"].runs == ({"device": "cpu"}, {"device": "node-b/cpu"})
    # The Devices view lists each node, as the node lists itself.
    text = " ".join(m.value for m in page("Devices").markdown)
    assert f"node-b · {host}" in text and "`head-a/cpu`" in text and "`node-b/cpu`" in text


def test_a_run_on_the_second_node_runs_there_streams_its_epochs_and_stops(cluster, recorded):
    from core.cluster import nodes

    runner, store = recorded
    run_id = runner.submit(TrainConfig(**SLOW, device="node-b/cpu"))
    # Live: epoch 1 is in the store while the run is still going.
    wait_until(lambda: stored_epochs(store, run_id) >= 1)
    status = runner.status(run_id)
    assert status.state == "running" and status.done < SLOW["epochs"]
    wait_until(lambda: stored_epochs(store, run_id) >= 2)
    asked = time.monotonic()
    assert runner.cancel(run_id, by="the test")
    final = runner.wait(run_id, timeout=30)
    print(f"Stop on a Ray node took {time.monotonic() - asked:.2f} s")  # printed, not asserted (a loaded CI)
    assert final.state == "cancelled" and final.stopped_by == "the test"
    kept = store.get(run_id)
    assert kept.status == "cancelled" and len(kept.epochs) == final.done >= 2
    # It ran on node-b: the node id comes from the actor's own runtime context there.
    assert kept.device["node_id"] == nodes.find("node-b").node_id != nodes.find("head-a").node_id
    assert kept.device["node"] == "node-b" and kept.config["device"] == "node-b/cpu"
    assert kept.host["hostname"] in kept.device["label"] and kept.device["variables_on"] == "CPU:0"


def test_a_removed_node_leaves_its_run_interrupted_and_the_queue_goes_on(cluster, recorded):
    made, second = cluster
    runner, store = recorded
    lost = runner.submit(TrainConfig(**SLOW, device="node-b/cpu"))
    after = runner.submit(TrainConfig(**QUICK, device="head-a/cpu"))
    wait_until(lambda: stored_epochs(store, lost) >= 1)
    made.remove_node(second, allow_graceful=False)
    final = runner.wait(lost, timeout=60)
    assert final.state == "interrupted"
    assert final.error.startswith("The Ray node node-b was lost after epoch ") and "kept" in final.error
    kept = store.get(lost)
    assert kept.status == "interrupted" and len(kept.epochs) == final.done >= 1
    nxt = runner.wait(after, timeout=150)
    assert nxt.state == "completed", nxt.error
    assert store.get(after).device["node"] == "head-a"


def test_a_two_node_comparison_names_each_host_in_its_label(cluster, recorded):
    from ui import charts, run_text

    _, store = recorded
    rows = [r for r in store.history() if r.status != "running" and r.epochs_done]  # the module's runs on each node
    by_node = {r.device.split("/")[0]: r for r in rows}
    pair = [by_node["node-b"], by_node["head-a"]]
    results = store.load([r.run_id for r in pair])
    labels = run_text.run_labels(pair, [r.config for r in results])
    assert labels[0] != labels[1]
    for label, row in zip(labels, pair, strict=True):
        assert row.host and f"on {row.host}" in label and row.device.split("/")[0].upper() in label
    frame = charts.epochs_frame([r.to_frame() for r in results], labels)
    assert sorted(frame["series"].unique()) == sorted(labels)
