"""Runs as a TensorBoard log directory (core.export.tensorboard), read back by TensorBoard's own reader: the CLI's
export --tensorboard and History's download, checked against the runs as the history stored them, exactly."""

from __future__ import annotations

import dataclasses
import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.compat.proto import types_pb2
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.util import tensor_util

from core.analysis import compare
from core.cli.tensorboard import logdir_zip
from core.export import tensorboard
from core.history.profiles import xspace
from core.history.store import Store
from tests.conftest import run_cli
from tests.test_app import page
from ui.resources import get_store

TINY = ["--dataset", "synthetic", "--train-subset", "300", "--batch-size", "50", "--epochs", "3"]
EPOCH_TAGS = {"accuracy/test": "test_accuracy", "accuracy/train": "train_accuracy", "loss/test": "test_loss"}


def read(folder: Path):
    """TensorBoard's reader of one run's folder: every tensor kept (TensorBoard's default samples them)."""
    reader = ea.EventAccumulator(str(folder), size_guidance={ea.TENSORS: 0})
    reader.Reload()
    return reader


def f32(values) -> list[float]:
    """The stored figures as TensorBoard's scalars hold them: float32."""
    return [float(np.float32(v)) for v in values]


def points(reader, tag: str) -> list[tuple[int, float, float]]:
    return [(t.step, t.wall_time, tensor_util.make_ndarray(t.tensor_proto).item()) for t in reader.Tensors(tag)]


def hparams_data(reader, tag: str):
    return plugin_data_pb2.HParamsPluginData.FromString(reader.PluginTagToContent("hparams")[tag])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A comparison of plain fit and the multi-step loop recorded by the CLI, then exported by it: (store, ids, DIR)."""
    # A history of this module's own: the session's file read "disk I/O error" here once, after other tests' writes.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TFDASH_DB", str(tmp_path_factory.mktemp("tensorboard") / "runs.sqlite3"))
        get_store.clear()  # the page reads $TFDASH_DB once per process: this module's file, then the session's again
        proc = run_cli("compare", *TINY, "--axis", "execution", "--values", "keras-fit,multi-step-loop")
        assert proc.returncode == 0, proc.stderr
        store = Store(os.environ["TFDASH_DB"])
        ids = [row.run_id for row in store.history()[:2]][::-1]
        logs = tmp_path_factory.mktemp("export") / "logs"
        done = run_cli("export", "--tensorboard", str(logs), *ids)
        assert done.returncode == 0, done.stderr
        assert (
            done.stdout.strip()
            == f"Wrote 2 runs (2 with a profile trace) to {logs}. Open it with: tensorboard --logdir {logs}"
        )
        yield store, ids, logs
    get_store.clear()


def test_each_run_reads_back_in_tensorboard_as_the_history_stored_it(exported):
    store, ids, logs = exported
    runs = store.load(ids)
    folders = sorted(p for p in logs.iterdir() if p.is_dir())
    # Each run's folder is named for what the two compare: its id, then the setting they differ in.
    assert [f.name for f in folders] == [
        f"{i}-execution={r.config['execution']}" for i, r in zip(ids, runs, strict=True)
    ]
    for folder, run in zip(folders, runs, strict=True):
        reader, start = read(folder), tensorboard.started(run)
        epochs = run.epochs
        assert [p[0] for p in points(reader, "accuracy/test")] == [e.epoch for e in epochs]
        for tag, field in {**EPOCH_TAGS, "loss/train": "train_loss"}.items():
            assert [p[2] for p in points(reader, tag)] == f32(getattr(e, field) for e in epochs), tag
        # TensorBoard's data server charts float32 scalars only (a float64 one showed no chart): as tf.summary writes.
        assert {t.tensor_proto.dtype for t in reader.Tensors("loss/test")} == {types_pb2.DT_FLOAT}
        # Wall time: the run's start plus its training seconds, the page's clock (Relative reads as its x axis).
        ends = [start + sum(e.train_seconds for e in epochs[: i + 1]) for i in range(len(epochs))]
        assert [p[1] for p in points(reader, "accuracy/test")] == pytest.approx(ends, abs=1e-6)
        calls = [c for e in epochs for c in e.calls]
        got = points(reader, "calls/train_accuracy")
        assert [s for s, _w, _v in got] == [c.samples for c in calls] and len(calls) >= 3
        assert [v for _s, _w, v in got] == f32(c.train_accuracy for c in calls)
        assert [w for _s, w, _v in got] == pytest.approx([start + c.seconds for c in calls], abs=1e-6)
        # The warm-up epoch apart from the steady ones, and the steady samples per second as the page says it.
        assert [p[2] for p in points(reader, "seconds_per_epoch/warmup")] == f32([epochs[0].train_seconds])
        assert [p[2] for p in points(reader, "seconds_per_epoch/steady")] == f32(e.train_seconds for e in epochs[1:])
        assert [p[2] for p in points(reader, tensorboard.STEADY_RATE)] == f32([compare.throughput(run)])
        # The HParams session: the settings, XLA as it ran, and how the run ended.
        started = hparams_data(reader, "_hparams_/session_start_info").session_start_info
        values = {k: v.string_value or v.number_value for k, v in started.hparams.items()}
        assert values == {**tensorboard.hparams(run)} and values["execution"] == run.config["execution"]
        assert values["xla"] == ("on" if run.device["jit_compile"] else "off") and values["batch_size"] == 50
        assert started.group_name == folder.name and started.start_time_secs == start
        assert hparams_data(reader, "_hparams_/session_end_info").session_end_info.status == 1  # STATUS_SUCCESS
        # The profile plugin's file: the history's trace, byte for byte.
        (trace,) = folder.glob("plugins/profile/*/*.xplane.pb")
        assert trace.read_bytes() == xspace(store.trace(run.run_id))
    experiment = hparams_data(read(logs), "_hparams_/experiment").experiment
    assert [m.name.tag for m in experiment.metric_infos] == ["accuracy/test", tensorboard.STEADY_RATE]
    assert {h.name for h in experiment.hparam_infos} == set(tensorboard.HPARAMS)
    differs = {h.name for h in experiment.hparam_infos if h.differs}  # what TensorBoard's table shows first
    assert "execution" in differs and not differs & {"model", "device", "batch_size", "learning_rate"}


def test_ids_and_host_names_of_any_text_make_folders_inside_the_directory_and_nowhere_else(exported, tmp_path):
    store, ids, _logs = exported
    run = store.load(ids[:1])[0]
    odd = ["../../escape", "a/b.c", "..", "跑步 1.0", "C:\\x"]
    runs = [dataclasses.replace(run, run_id=i, host={"hostname": "../../host/."}) for i in odd]
    top = tmp_path / "out"
    folders = tensorboard.write_logdir(top, runs, {i: store.trace(run.run_id) for i in odd})
    assert len({f.name for f in folders}) == len(odd) and all(f.parent == top for f in folders)
    assert folders[3].name.startswith("跑步_1.0") and all(f.name not in (".", "..") for f in folders)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(top in p.parents for p in written) and len(written) == 1 + 2 * len(odd)
    assert all(len(read(f).Tensors("accuracy/test")) == len(run.epochs) for f in folders)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["RUN"], "RUN_ID 'nope' is not in the history"),
        (["RUN", "--csv"], "--tensorboard DIR takes RUN_IDs (none: every run), not --all, --csv or --out."),
        (["FILE"], "is a file; name a folder"),
    ],
)
def test_a_bad_export_says_one_sentence(exported, tmp_path, args, says):
    (tmp_path / "f").write_text("x")
    target = str(tmp_path / "f") if args[0] == "FILE" else str(tmp_path / "logs")
    proc = run_cli("export", "--tensorboard", target, *(["nope"] if args[0] == "RUN" else []), *args[1:])
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and says in proc.stderr, proc.stderr
    assert not (tmp_path / "logs").exists()


def test_two_run_ids_without_tensorboard_is_a_usage_error(exported):
    _store, ids, _logs = exported
    proc = run_cli("export", *ids)
    assert proc.returncode == 2 and "export prints one RUN_ID" in proc.stderr


def test_history_makes_the_log_in_a_process_of_its_own_then_offers_it(exported):
    store, ids, _logs = exported
    at = page("History")
    at.multiselect(key="history_pick").set_value(ids).run()
    at.button(key="history_tensorboard_make").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    held, data = at.session_state["tensorboard_log"]
    assert held == tuple(ids)
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "tensorboard-logs/events.out.tfevents.0.tfdash-experiment" in names
    assert sum(n.endswith(".xplane.pb") for n in names) == 2 and all(n.startswith("tensorboard-logs/") for n in names)
    assert zipfile.ZipFile(io.BytesIO(logdir_zip(store.path, ids[:1]))).namelist() != names  # the picked runs only
