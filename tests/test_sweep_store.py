"""Sweeps in the history: stored by the runner and the CLI, listed, exported, imported exactly, bad files refused."""

import copy
import csv
import io
import json
import random
import signal
import statistics
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.history.importer import IMPORTABLE_STATUSES, MAX_FILE_BYTES, RunFileError
from core.history.store import Store, StoreError, attach
from core.results import SweepPoint, SweepResult
from core.results.crossover import crossover_sentence
from core.settings.config import DATASETS, MODELS, SweepConfig
from tests.conftest import borrowed, wait_until
from tests.sample_runs import SERVER_HOST, make_result
from tests.store_helpers import checkpoint, save_record

TINY = SweepConfig(model="softmax", batch_sizes=(16, 64), steps=5, repeats=2)


def db_bytes(store: Store) -> dict[str, bytes]:
    """Every file of the database: the main file, and the write-ahead log if there is one."""
    files = [store.path, Path(f"{store.path}-wal")]
    return {p.name: p.read_bytes() for p in files if p.exists()}


def make_sweep(run_id: str | None = "gpusweep0001", seed: int = 0, started_at: str = "2026-11-30T09:00:00.000+00:00"):
    """A two-device MLP sweep shaped like run_sweep's output on the GPU server, one point out of memory."""
    config = SweepConfig(devices=("cpu", "gpu"), model="mlp", hidden_units=512, batch_sizes=(16, 256, 4096), steps=20)
    flops, peaks = 2_442_240, {"cpu": 812.5, "gpu": 51_234.75}
    rng = random.Random(seed)
    points = []
    gain = {"cpu": {16: 1.0, 256: 1.0}, "gpu": {16: 0.2, 256: 9.0}}  # the GPU loses at batch 16, wins at 256
    for device in config.devices:
        for batch in config.batch_sizes:
            if (device, batch) == ("gpu", 4096):
                error = "Out of memory on gpu from batch 4096; smaller batches only."
                points.append(SweepPoint(device, batch, 0, None, None, None, error=error))
                continue
            rates = tuple(rng.uniform(0.8, 1.2) * gain[device].get(batch, 1.0) * batch * 100 for _ in range(3))
            median = statistics.median(rates)
            gflops = flops * median / 1e9
            points.append(
                SweepPoint(
                    device,
                    batch,
                    20,
                    median,
                    min(rates),
                    max(rates),
                    rates,
                    batch / median * 1000,
                    gflops,
                    gflops / peaks[device],
                    rng.uniform(0.1, 3.0),
                    rng.uniform(0.3, 0.6),
                )
            )
    devices = {
        name: {
            "requested": name,
            "tf_device": f"/{name.upper()}:0",
            "name": label,
            "label": name.upper(),
            "variables_on": f"{name.upper()}:0",
            "peak_gflops": peaks[name],
            "peak_matrix_size": 4096,
        }
        for name, label in (("cpu", SERVER_HOST["cpu_model"]), ("gpu", "NVIDIA H200"))
    }
    model = {
        "name": "mlp",
        "hidden_units": 512,
        "train_flops_per_sample": flops,
        "forward_flops_per_sample": flops // 3,
        "parameters": 407_050,
    }
    return SweepResult(
        config=config.to_dict(),
        host=dict(SERVER_HOST),
        devices=devices,
        model=model,
        points=points,
        status="completed",
        started_at=started_at,
        finished_at="2026-11-30T09:01:02.250+00:00",
        run_id=run_id,
        crossover=crossover_sentence(points),
    )


VALID = make_sweep()
VALID_TEXT = VALID.to_json()
VALID_DICT = json.loads(VALID_TEXT)


# -- a real sweep, run through the runner into a store ----------------------------------------------------
@pytest.fixture(scope="module")
def recorded(tmp_path_factory, session_runner):
    """A tiny CPU sweep run by the shared Runner attached to a fresh store: (store, the runner's final status)."""
    store = Store(tmp_path_factory.mktemp("sweeps") / "runs.sqlite3")
    with borrowed(session_runner) as runner:
        attach(runner, store)
        run_id = runner.submit(TINY)
        status = runner.wait(run_id, timeout=120)
        assert status.state == "completed", status.error
        # The runner says "finished" to its listeners just after wait() returns, and the store's reader does not
        # wait for its writer, so the row lands a moment later.
        wait_until(lambda: store.get_sweep(run_id) is not None, 10, "the sweep's row")
    yield store, status
    store.close()


def test_a_sweep_run_through_the_runner_is_stored_as_it_was_measured(recorded):
    store, status = recorded
    result = status.result
    assert store.get_sweep(status.run_id).to_dict() == result.to_dict()
    [row] = store.sweeps()
    assert (row.run_id, row.kind, row.status, row.origin) == (status.run_id, "sweep", "completed", "local")
    assert (row.model, row.hidden_units, row.devices, row.batch_sizes) == ("softmax", None, ("cpu",), (16, 64))
    assert (row.points_measured, row.points_total, row.when) == (2, 2, result.started_at)
    assert row.host == result.host["hostname"] and row.crossover == crossover_sentence(result.points)
    assert row.to_dict()["devices"] == ["cpu"] and row.to_dict()["batch_sizes"] == [16, 64]
    # The training API is unchanged: a sweep is not a training run.
    assert store.get(status.run_id) is None and store.history() == []


def test_export_then_import_round_trips_byte_for_byte(recorded, tmp_path):
    store, status = recorded
    text = store.export_json(status.run_id)
    assert text == status.result.to_json()  # the file `sweep --json` writes
    with Store(tmp_path / "laptop.sqlite3") as laptop:
        outcome = laptop.import_file(text.encode())
        assert outcome.added and outcome.kind == "sweep" and outcome.run_id == status.run_id
        assert outcome.describe() == f"Imported sweep {status.run_id} from {row_host(status)} (cpu, completed)."
        assert laptop.export_json(status.run_id) == text
        assert laptop.export_csv(status.run_id) == store.export_csv(status.run_id)
        assert laptop.sweeps()[0].origin == "imported"
        checkpoint(laptop)
        before = db_bytes(laptop)
        again = laptop.import_file(text.encode())
        assert not again.added
        assert (
            again.describe()
            == f"Sweep {status.run_id} from {row_host(status)} is already in the history; nothing changed."
        )
        assert db_bytes(laptop) == before and len(laptop.sweeps()) == 1


def row_host(status) -> str:
    return status.result.host["hostname"]


def test_points_export_as_csv_exactly(recorded):
    store, status = recorded
    rows = list(csv.DictReader(io.StringIO(store.export_csv(status.run_id))))
    assert [(r["device"], r["run_id"], int(r["batch_size"])) for r in rows] == [
        ("CPU", status.run_id, 16),
        ("CPU", status.run_id, 64),
    ]
    for row, point in zip(rows, status.result.points, strict=True):
        assert float(row["samples_per_second"]) == point.samples_per_second  # repr: every digit survives
        assert tuple(map(float, row["samples_per_second_repeats"].split(";"))) == point.samples_per_second_repeats
        assert float(row["utilisation"]) == point.utilisation and row["error"] == ""


# -- hand-built sweeps: listing, conflicts, delete --------------------------------------------------------
def test_the_hand_built_sweep_is_valid_and_round_trips(tmp_path):
    # Every refusal below starts from this file, so it must itself be accepted.
    with Store(tmp_path / "runs.sqlite3") as db:
        assert db.import_file(VALID_TEXT.encode()).added
        assert db.export_json(VALID.run_id) == VALID_TEXT
        assert db.get_sweep(VALID.run_id).crossover == "GPU faster from batch 256."


def test_sweeps_are_listed_newest_first_beside_runs_and_deleted_alone(tmp_path):
    with Store(tmp_path / "runs.sqlite3") as db:
        db.import_file(make_sweep("old", started_at="2026-11-29T09:00:00.000+00:00").to_json().encode())
        db.import_file(make_sweep("new", seed=1).to_json().encode())
        db.import_file(make_result(run_id="run1").to_json().encode())  # the generic import takes runs too
        assert [r.run_id for r in db.sweeps()] == ["new", "old"] and [r.run_id for r in db.history()] == ["run1"]
        row = db.sweeps(limit=1)[0]
        assert (row.model, row.hidden_units, row.devices, row.batch_sizes) == (
            "mlp",
            512,
            ("cpu", "gpu"),
            (16, 256, 4096),
        )
        assert (row.points_measured, row.points_total, row.host) == (5, 6, "gpu-server")
        assert db.delete("old") is True and db.delete("old") is False
        assert db.get_sweep("old") is None and [r.run_id for r in db.sweeps()] == ["new"]
        assert db.get("run1") is not None
        with pytest.raises(KeyError):
            db.export_json("old")


def test_a_file_without_an_id_is_named_by_its_content(tmp_path):
    with Store(tmp_path / "runs.sqlite3") as db:
        first = db.import_file(make_sweep(run_id=None).to_json().encode())
        again = db.import_file(make_sweep(run_id=None).to_json().encode())
        other = db.import_file(make_sweep(run_id=None, seed=2).to_json().encode())
        assert first.added and not again.added and other.added
        assert first.run_id == again.run_id != other.run_id and len(db.sweeps()) == 2


def test_a_different_result_under_a_known_id_is_refused_and_nothing_changes(tmp_path):
    with Store(tmp_path / "runs.sqlite3") as db:
        db.import_file(VALID_TEXT.encode())
        db.finish(make_result(run_id="taken"))
        checkpoint(db)
        before = db_bytes(db)
        for clash in (make_sweep(seed=9), make_sweep(run_id="taken")):
            with pytest.raises(RunFileError, match="already in the history"):
                db.import_file(clash.to_json().encode())
        assert db_bytes(db) == before


def test_an_unreadable_stored_sweep_is_listed_with_the_reason_not_hidden(tmp_path):
    with Store(tmp_path / "runs.sqlite3") as db:
        save_record(db, "sweep", {"schema_version": 1, "batch_sizes": [16]}, run_id="odd")
        [row] = db.sweeps()
        assert row.run_id == "odd" and row.error.startswith("The stored sweep cannot be read")
        with pytest.raises(StoreError, match="cannot read"):
            db.get_sweep("odd")


# -- malformed and hostile sweep files ------------------------------------------------------------------
@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A store holding another sweep and a training run (not VALID: a bad copy of it must fail on its own)."""
    store = Store(tmp_path_factory.mktemp("refuse") / "runs.sqlite3")
    store.import_file(make_sweep("othersweep01", seed=5).to_json().encode())
    store.finish(make_result(run_id="local1"))
    checkpoint(store)
    yield store
    store.close()


def assert_refused(store: Store, data: bytes) -> str:
    """The file is refused with one short sentence and not one byte of the database changes."""
    before = db_bytes(store)
    with pytest.raises(RunFileError) as info:
        store.import_file(data)
    message = str(info.value)
    assert "\n" not in message and message.endswith(".") and len(message) < 300, message
    assert "already in the history" not in message, message  # no case reuses a stored id
    assert db_bytes(store) == before
    return message


def _set(data, path: tuple, value):
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    if value is _DROP:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


_DROP = object()
MEASURED = [i for i, p in enumerate(VALID_DICT["points"]) if p["samples_per_second"] is not None]
H = VALID_DICT["config"]["hidden_units"]
not_text = st.one_of(st.integers(), st.booleans(), st.lists(st.text(max_size=3), max_size=2), st.floats())
not_whole = st.one_of(
    st.text(max_size=5), st.booleans(), st.none(), st.floats(0.1, 0.9), st.lists(st.integers(), max_size=2)
)
bad_number = st.one_of(
    st.floats(max_value=-1e-9),
    st.integers(max_value=-1),
    st.text(max_size=5),
    st.booleans(),
    st.sampled_from([float("nan"), float("inf"), 10**400]),
)
not_amount = st.one_of(bad_number, st.lists(st.floats(), max_size=2))
not_object = st.one_of(st.text(max_size=5), st.integers(), st.none(), st.lists(st.integers(), max_size=2))
bad_devices = st.one_of(
    st.lists(st.sampled_from(["tpu", "cuda:0", "gpu:x", "", " gpu 0"]), min_size=1, max_size=3),
    st.just(["cpu", "cpu:0"]),
    st.just([]),
    st.just(["cpu"] * 9),
    st.just(["gpu"]),  # gpu alone: cpu points unlisted
    st.integers(),
    st.none(),
    st.lists(st.lists(st.text(max_size=2), max_size=2), min_size=1, max_size=2),
)
bad_batches = st.one_of(
    st.lists(st.one_of(st.integers(max_value=0), st.integers(min_value=65_537)), min_size=1, max_size=3),
    st.just([]),
    st.just(list(range(1, 18))),
    st.just([16]),
    st.just(["x"]),
    st.just([1.5]),
    st.none(),
    not_object,
)

# One strategy of refused values per place in the file: each is its own test case, so each gets examples.
CASES = {
    ("schema_version",): st.one_of(st.integers().filter(lambda v: v != 1), st.just(1.0), st.just(True), st.text()),
    ("kind",): st.one_of(st.text(max_size=12).filter(lambda v: v != "sweep"), not_text),
    ("status",): st.one_of(st.text(max_size=12).filter(lambda v: v not in IMPORTABLE_STATUSES), not_text),
    ("run_id",): st.one_of(st.sampled_from(["", "a b", "../../etc", "x" * 65, "-lead"]), not_text),
    ("started_at",): st.one_of(st.sampled_from(["yesterday", "2026-13-01", "12:00 pm"]), not_text),
    ("finished_at",): st.one_of(st.sampled_from(["tomorrow", "2026-02-30"]), not_text),
    ("error",): not_text,
    ("crossover",): not_text,
    ("config",): not_object,
    ("config", "devices"): bad_devices,
    ("config", "batch_sizes"): bad_batches,
    ("config", "model"): st.one_of(
        st.text(max_size=12).filter(lambda v: v not in MODELS), st.just("softmax"), not_text
    ),
    ("config", "hidden_units"): st.one_of(st.integers().filter(lambda v: v != H), not_whole),
    ("config", "steps"): st.one_of(st.integers(max_value=0), st.integers(min_value=100_001), st.text(max_size=5)),
    ("config", "repeats"): st.one_of(st.integers(max_value=0), st.integers(min_value=51), not_whole),
    ("config", "seed"): st.one_of(st.integers(max_value=-1), st.integers(min_value=2**31), not_whole),
    ("config", "dataset"): st.one_of(st.text(max_size=20).filter(lambda v: v not in DATASETS), not_text),
    ("config", "colour"): st.integers(),
    ("model",): not_object,
    ("model", "name"): st.one_of(st.sampled_from(["softmax", "cnn", "vgg"]), not_text),
    ("model", "hidden_units"): st.one_of(st.integers().filter(lambda v: v != H), st.text(max_size=4), st.booleans()),
    ("model", "parameters"): st.one_of(st.integers(max_value=-1), not_whole.filter(lambda v: v is not None)),
    ("model", "train_flops_per_sample"): st.one_of(st.integers(max_value=-1), st.floats(), st.text(max_size=4)),
    ("model", "layers"): st.integers(),
    ("host",): not_object,
    ("host", "hostname"): not_text.filter(lambda v: v is not None),
    ("host", "cpu_cores"): st.one_of(st.integers(max_value=-1), not_whole),
    ("host", "gpus"): not_object.filter(lambda v: not isinstance(v, list) or v),
    ("host", "gpus", 0, "name"): st.one_of(not_text, st.integers(10_001, 20_000).map(lambda n: "x" * n)),
    ("devices",): not_object,
    ("devices", "tpu"): st.just({"requested": "tpu"}),
    ("devices", "cpu"): not_object,
    ("devices", "cpu", "peak_gflops"): not_amount,
    ("devices", "gpu", "peak_matrix_size"): st.one_of(st.integers(max_value=0), st.text(max_size=3), st.floats()),
    ("devices", "gpu", "name"): not_text.filter(lambda v: v is not None),
    ("devices", "gpu", "fan_rpm"): st.integers(),
    ("points",): st.one_of(st.text(max_size=5), st.integers(), st.none(), st.dictionaries(st.text(), st.integers())),
    ("points", "i"): not_object,
    ("points", "i", "device"): st.one_of(st.sampled_from(["tpu", "gpu:1", "", "CPU"]), not_text),
    ("points", "i", "batch_size"): st.one_of(st.integers().filter(lambda v: v not in (16, 256, 4096)), not_whole),
    ("points", "i", "steps"): st.one_of(st.integers(max_value=-1), st.integers(min_value=100_001), not_whole),
    ("points", "i", "samples_per_second"): st.one_of(not_amount, st.none()),
    ("points", "i", "samples_per_second_min"): st.floats(1e12, 1e15),  # above the median
    ("points", "i", "samples_per_second_repeats"): st.one_of(st.lists(bad_number, min_size=1, max_size=3), bad_number),
    ("points", "i", "utilisation"): not_amount,
    ("points", "i", "step_ms"): not_amount,
    ("points", "i", "error"): not_text,
    ("points", "i", "colour"): st.text(max_size=5),
}
for _required in ("schema_version", "status", "config", "model", "host", "devices", "points"):
    CASES[(f"-{_required}",)] = st.just(_DROP)


def _place(case: tuple, i: int) -> tuple:
    if case[0].startswith("-"):
        return (case[0][1:],)
    return tuple(i if key == "i" else key for key in case)


@pytest.mark.parametrize("case", list(CASES), ids=[".".join(map(str, c)) for c in CASES])
def test_malformed_sweep_files_are_refused_with_the_store_unchanged(filled, case):
    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(i=st.sampled_from(MEASURED), value=CASES[case])
    def check(i, value):
        data = _set(VALID_DICT, _place(case, i), value)
        assert_refused(filled, json.dumps(data, allow_nan=True).encode())

    check()


def test_a_point_measured_twice_is_refused(filled):
    doubled = _set(VALID_DICT, ("points",), VALID_DICT["points"] + VALID_DICT["points"][:1])
    assert "a second time" in assert_refused(filled, json.dumps(doubled).encode())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    how=st.sampled_from(["deep", "token", "encoding", "truncated", "digits", "long", "many", "big"]),
    n=st.integers(0, 10**6),
)
def test_hostile_sweep_files_are_refused_by_the_same_limits_as_runs(filled, how, n):
    text = VALID_TEXT
    data = {
        "deep": lambda: text.replace(
            '"host": {', '"host": {"x": ' + "[" * (11 + n % 5000) + "]" * (11 + n % 5000) + ", ", 1
        ).encode(),
        "token": lambda: text.replace('"utilisation": 0.', '"utilisation": NaN, "x": 0.', 1).encode(),
        "encoding": lambda: text.replace("gpu-server", "gpu-sérvér").encode("latin-1"),
        "truncated": lambda: text.encode()[: n % len(text)],
        "digits": lambda: text.replace('"seed": 0', '"seed": ' + "9" * (4301 + n % 5000), 1).encode(),
        "long": lambda: text.replace("gpu-server", "x" * (10_001 + n % 5000), 1).encode(),
        "many": lambda: text.replace('"gpus": [', '"gpus": [' + "1, " * (1001 + n % 1000), 1).encode(),
        "big": lambda: text.encode() + b" " * MAX_FILE_BYTES,
    }[how]()
    assert_refused(filled, data)


def test_refusals_name_the_field(filled):
    cases = {
        "points[0].samples_per_second must be a finite number": (("points", 0, "samples_per_second"), -1.0),
        "points[1].batch_size must be a whole number": (("points", 1, "batch_size"), "big"),
        "config: batch_sizes must be from 1 to 65536": (("config", "batch_sizes"), [0, 16]),
        "model.hidden_units is 64 but the config says 512": (("model", "hidden_units"), 64),
        "devices has 'tpu', which config.devices does not list": (("devices", "tpu"), {}),
        "status must be one of completed, cancelled, failed, interrupted, not 'running'": (("status",), "running"),
        "kind must be one of train, sweep, not 'scan'": (("kind",), "scan"),
        "The file is missing the field 'points'": (("points",), _DROP),
    }
    for says, (place, value) in cases.items():
        assert says in assert_refused(filled, json.dumps(_set(VALID_DICT, place, value)).encode())


# -- the command line ---------------------------------------------------------------------------------
def test_cli_sweep_records_it_and_history_export_import_handle_sweeps(tmp_path, capsys):
    db, laptop, written = str(tmp_path / "runs.sqlite3"), str(tmp_path / "laptop.sqlite3"), tmp_path / "sweep.json"
    previous = signal.getsignal(signal.SIGINT)  # the command installs a Ctrl-C handler
    try:
        args = ["--model", "softmax", "--batch-sizes", "16,64", "--steps", "5", "--repeats", "2"]
        assert main(["sweep", *args, "--json", str(written), "--db", db]) == 0
    finally:
        signal.signal(signal.SIGINT, previous)
    run_id = json.loads(written.read_text())["run_id"]
    assert f"sweep {run_id}, recorded in {db}" in capsys.readouterr().out

    assert main(["history", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("SWEEP") and lines[1].split()[0] == run_id
    assert lines[1].split()[3:8] == ["softmax", "cpu", "16,64", "2/2", "completed"] and len(lines) == 2
    with Store(db) as store:
        store.finish(make_result(run_id="run1"))
    assert main(["history", "--json", "--db", db]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["run_id"]) for r in rows] == [("train", "run1"), ("sweep", run_id)]
    assert main(["history", "--db", db]) == 0
    text = capsys.readouterr().out
    assert text.startswith("RUN") and "\n\nSWEEP" in text  # runs, then sweeps, each under its own header

    assert main(["export", run_id, "--db", db]) == 0
    exported = capsys.readouterr().out
    assert exported == written.read_text() + "\n"  # the recorded sweep is the file --json wrote, byte for byte
    assert main(["export", run_id, "--csv", "--db", db]) == 0
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0].startswith("device,run_id,batch_size,steps,samples_per_second") and len(csv_lines) == 3

    assert main(["import", str(written), "--db", laptop]) == 0
    host = json.loads(written.read_text())["host"]["hostname"]
    assert capsys.readouterr().out == f"Imported sweep {run_id} from {host} (cpu, completed).\n"
    assert main(["import", str(written), "--db", laptop]) == 0
    assert capsys.readouterr().out == f"Sweep {run_id} from {host} is already in the history; nothing changed.\n"
    assert main(["export", run_id, "--db", laptop]) == 0 and capsys.readouterr().out == exported

    bad = tmp_path / "bad.json"
    bad.write_text(written.read_text().replace('"completed"', '"finished"', 1))
    before = {p.name: p.read_bytes() for p in tmp_path.glob("laptop.sqlite3*")}
    assert main(["import", str(bad), "--db", laptop]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: status must be one of"), err
    assert {p.name: p.read_bytes() for p in tmp_path.glob("laptop.sqlite3*")} == before


def test_cli_sweep_with_an_unusable_db_fails_before_timing_anything(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where a folder should be")
    db = str(blocker / "runs.sqlite3")
    assert main(["sweep", "--batch-sizes", "16", "--steps", "5", "--db", db]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: The run history {db} cannot be opened"), err
    assert "CPU " not in captured.out  # no point was measured
