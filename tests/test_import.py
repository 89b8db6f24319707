"""Importing run files: exact round trips, no duplicates, and every bad file refused with the store untouched."""

import copy
import io
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.history.importer import IMPORTABLE_STATUSES, MAX_FILE_BYTES, RunFileError, parse_run_file
from core.history.schemas import EPOCH_V4, MAX_LOSS
from core.history.store import Store
from core.results import EpochMetrics
from core.settings.config import DATASETS
from tests.conftest import ROOT
from tests.sample_runs import make_result
from tests.store_helpers import checkpoint, integrity_check

VALID = make_result(run_id="gpu0run00001", epochs=3)
VALID_TEXT = VALID.to_json()
VALID_DICT = json.loads(VALID_TEXT)
OTHER_TEXT = make_result(run_id="other0000001", seed=5).to_json()


def db_bytes(store: Store) -> dict[str, bytes]:
    """Every file of the database: the main file, and the write-ahead log if there is one."""
    files = [store.path, Path(f"{store.path}-wal")]
    return {p.name: p.read_bytes() for p in files if p.exists()}


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A store holding one imported run and one local run (not VALID: a bad copy of it must fail on its own)."""
    store = Store(tmp_path_factory.mktemp("import") / "runs.sqlite3")
    store.import_file(OTHER_TEXT.encode())
    store.finish(make_result(run_id="local1", seed=7))
    checkpoint(store)
    yield store
    store.close()


def assert_refused(store: Store, data: bytes, conflict: bool = False) -> str:
    """The file is refused with one sentence and not one byte of the database changes."""
    before = db_bytes(store)
    with pytest.raises(RunFileError) as info:
        store.import_file(data)
    message = str(info.value)
    # No file here reuses a stored run's id, so a refusal always comes from the checks, never the duplicate guard.
    assert "different run" not in message or conflict, message
    assert "\n" not in message and message.endswith(".") and len(message) < 300, message
    assert db_bytes(store) == before
    return message


# -- valid files -----------------------------------------------------------------------
def test_a_valid_file_round_trips_export_then_import_exactly(tmp_path):
    with Store(tmp_path / "a.sqlite3") as first, Store(tmp_path / "b.sqlite3") as second:
        outcome = first.import_file(VALID_TEXT.encode())
        assert outcome.added and outcome.run_id == "gpu0run00001"
        assert outcome.describe() == "Imported run gpu0run00001 from gpu-server (GPU:0, completed)."
        exported = first.export_json("gpu0run00001")
        assert exported == VALID_TEXT  # byte for byte the file that came in
        second.import_file(exported.encode())
        assert second.export_json("gpu0run00001") == exported
        assert second.get("gpu0run00001").to_dict() == VALID.to_dict()
        row = second.history()[0]
        assert (row.host, row.variables_on, row.origin) == ("gpu-server", "GPU:0", "imported")


def test_importing_the_same_run_twice_adds_nothing(filled):
    before = db_bytes(filled)
    outcome = filled.import_file(OTHER_TEXT.encode())
    assert not outcome.added
    assert outcome.describe() == "Run other0000001 from gpu-server is already in the history; nothing changed."
    assert db_bytes(filled) == before and len(filled.history()) == 2


def test_a_file_without_a_run_id_is_named_by_its_content(tmp_path):
    text = make_result(run_id=None, seed=3).to_json()
    with Store(tmp_path / "runs.sqlite3") as db:
        first = db.import_file(text.encode())
        again = db.import_file(text.encode())
        other = db.import_file(make_result(run_id=None, seed=4).to_json().encode())
        assert first.added and not again.added and other.added
        assert first.run_id == again.run_id != other.run_id
        assert len(db.history()) == 2


def test_a_different_run_under_a_known_id_is_refused(filled):
    changed = json.loads(OTHER_TEXT)
    changed["epochs"][2]["test_accuracy"] = 0.5
    assert "different run" in assert_refused(filled, json.dumps(changed).encode(), conflict=True)


def test_the_size_limit_is_5_mib(filled, tmp_path):
    assert MAX_FILE_BYTES == 5 * 2**20  # what Streamlit's server.maxUploadSize = 5 lets through, to the byte
    padded = VALID_TEXT + " " * (MAX_FILE_BYTES - len(VALID_TEXT.encode()))
    assert parse_run_file(padded.encode()).to_dict() == VALID.to_dict()  # exactly at the limit: fine
    assert assert_refused(filled, padded.encode() + b" ") == (
        "The file is 5,242,881 bytes; the limit is 5,242,880 bytes (5 MiB)."
    )
    big = tmp_path / "big.json"
    big.write_bytes(padded.encode() + b" " * 1000)
    with pytest.raises(RunFileError, match=r"^The file is 5,243,880 bytes; the limit is 5,242,880 bytes \(5 MiB\)\.$"):
        filled.import_file(big)  # its size, not the bytes read to find it too large


def test_every_epoch_field_has_a_rule():
    # A field added to EpochMetrics must get a range in the schema, or files carrying it would be refused.
    assert set(EPOCH_V4["properties"]) == {f.name for f in fields(EpochMetrics)}


# -- malformed and hostile files ---------------------------------------------------------
def _set(data: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


def _drop(data: dict, path: tuple) -> dict:
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return out


def _encode(data) -> bytes:
    return json.dumps(data, allow_nan=True).encode()  # NaN and Infinity go in as the tokens


N = len(VALID_DICT["epochs"])
not_a_number = st.one_of(st.text(max_size=20), st.none(), st.booleans(), st.lists(st.integers(), max_size=3))
not_text = st.one_of(st.integers(), st.booleans(), st.lists(st.text(max_size=3), max_size=2), st.floats())
huge = st.sampled_from([1e308, -1e308, float("nan"), float("inf"), -float("inf"), 10**30, 10**400])


def _outside(low: float, high: float):
    return st.one_of(
        st.floats(allow_nan=False).filter(lambda v: v < low or v > high),
        huge.filter(lambda v: not low <= v <= high),
        not_a_number,
    )


EPOCH_BAD = {
    "epoch": st.one_of(st.integers().filter(lambda v: v < 1 or v > N), not_a_number, st.floats()),
    "train_accuracy": _outside(0, 1),
    "test_accuracy": _outside(0, 1),
    "train_loss": _outside(0, MAX_LOSS),
    "test_loss": _outside(0, MAX_LOSS),
    "train_seconds": _outside(0, 1e7),
    "eval_seconds": _outside(0, 1e7),
    "samples_per_second": _outside(0, 1e13),
    "gflops_per_second": st.one_of(st.text(max_size=5), st.booleans(), huge, st.floats(max_value=-1e-9)),
    "warmup": st.one_of(st.integers(), st.text(max_size=5), st.none(), st.floats()),
}
CONFIG_BAD = {
    "dataset": st.one_of(st.text(max_size=30).filter(lambda v: v not in DATASETS), not_text),
    "epochs": st.one_of(st.integers().filter(lambda v: v != N), st.text(max_size=5), st.none()),
    "batch_size": st.one_of(st.integers().filter(lambda v: v < 1 or v > 1000), st.text(max_size=5), st.none()),
    "learning_rate": st.one_of(st.floats().filter(lambda v: not 0 < v <= 10), not_a_number),
    "device": st.one_of(st.sampled_from(["tpu", "gpu:x", "", "cuda:0", " gpu 0"]), not_text),
    "seed": st.one_of(st.integers().filter(lambda v: v < 0 or v > 2**31 - 1), st.text(max_size=5), st.floats(0.1, 0.9)),
    "train_subset": st.one_of(st.integers().filter(lambda v: v < 10 or v > 1_000_000), st.text(max_size=5)),
}


# Every field of the file, each with values it must refuse: one test per field, so each gets its examples.
TOP_BAD = {
    "schema_version": st.one_of(st.integers().filter(lambda v: v not in (2, 3)), st.just(3.0), not_a_number),
    "status": st.one_of(st.text(max_size=12).filter(lambda v: v not in IMPORTABLE_STATUSES), not_text),
    "run_id": st.one_of(st.sampled_from(["", "a b", "../../etc", "x" * 65, "-lead"]), not_text),
    "started_at": st.one_of(st.sampled_from(["yesterday", "2026-13-01", "12:00 pm"]), not_text),
    "error": not_text,
    "epochs": st.one_of(st.just([]), st.text(max_size=5), st.integers(), st.none()),  # [] : a completed run, no epochs
    "config": st.one_of(st.text(max_size=5), st.integers(), st.none(), st.lists(st.integers(), max_size=2)),
    "host": st.one_of(st.text(max_size=5), st.integers(), st.none()),
    "device": st.one_of(st.text(max_size=5), st.integers(), st.none()),
    "host.hostname": not_text,
    "device.variables_on": not_text,
    "host.gpus[0].name": st.integers(10_001, 50_000).map(lambda n: "x" * n),  # over the string limit
    "epochs[i]": st.one_of(st.text(max_size=5), st.integers(), st.none(), st.lists(st.integers(), max_size=2)),
}


def _top_path(name: str, i: int) -> tuple:
    return {
        "host.hostname": ("host", "hostname"),
        "device.variables_on": ("device", "variables_on"),
        "host.gpus[0].name": ("host", "gpus", 0, "name"),
        "epochs[i]": ("epochs", i),
    }.get(name, (name,))


FIELD_CASES = (
    [("epochs[i]." + name, EPOCH_BAD[name]) for name in EPOCH_BAD]
    + [("config." + name, CONFIG_BAD[name]) for name in CONFIG_BAD]
    + list(TOP_BAD.items())
)


def _path(case: str, i: int) -> tuple:
    if case.startswith("epochs[i]."):
        return ("epochs", i, case.split(".", 1)[1])
    if case.startswith("config."):
        return ("config", case.split(".", 1)[1])
    return _top_path(case, i)


@st.composite
def missing_or_extra_fields(draw):
    """A required field removed, or a field no run file has added."""
    places = [()] + [("config",)] + [("epochs", i) for i in range(N)]
    place = draw(st.sampled_from(places))
    target = VALID_DICT
    for key in place:
        target = target[key]
    if draw(st.booleans()):
        optional = {"error", "started_at", "finished_at", "run_id", "gflops_per_second"}
        name = draw(st.sampled_from(sorted(set(target) - optional)))
        return _drop(VALID_DICT, (*place, name))
    extra = draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in target))
    return _set(VALID_DICT, (*place, extra), draw(st.integers()))


@st.composite
def hostile_bytes(draw):
    """Files made to hurt a parser: deep nesting, NaN tokens, non-UTF-8, truncation, noise, huge numbers."""
    kind = draw(st.sampled_from(["deep", "token", "encoding", "truncated", "noise", "digits", "surrogate", "json"]))
    text = VALID_TEXT
    if kind == "deep":
        n = draw(st.integers(11, 200_000))
        return text.replace('"host": {', '"host": {"x": ' + "[" * n + "]" * n + ", ", 1).encode()
    if kind == "token":
        token = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999"]))
        field = draw(st.sampled_from(['"test_accuracy": ', '"train_seconds": ', '"learning_rate": ']))
        start = text.index(field) + len(field)
        end = min(text.index(c, start) for c in ",\n}" if c in text[start:])
        return (text[:start] + token + text[end:]).encode()
    if kind == "encoding":
        bad = draw(st.binary(min_size=1, max_size=8).filter(lambda b: not _utf8(b)))
        how = draw(st.sampled_from(["inside", "utf16", "latin1"]))
        if how == "utf16":
            return text.encode("utf-16")
        if how == "latin1":
            return text.replace("gpu-server", "gpu-sérvér").encode("latin-1")
        return text.replace("gpu-server", "gpu-").encode().replace(b'"gpu-"', b'"gpu-' + bad + b'"')
    if kind == "truncated":
        return text.encode()[: draw(st.integers(0, len(text) - 1))]
    if kind == "noise":
        return draw(st.binary(max_size=2000))
    if kind == "digits":
        return text.replace('"seed": 0', '"seed": ' + "9" * draw(st.integers(4301, 20_000)), 1).encode()
    if kind == "surrogate":
        return text.replace("gpu-server", "gpu-\\ud800", 1).encode()
    return json.dumps(draw(st.recursive(st.none() | st.integers() | st.text(), st.lists, max_leaves=20))).encode()


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize(("case", "bad"), FIELD_CASES, ids=[c for c, _ in FIELD_CASES])
def test_wrong_types_and_out_of_range_values_are_refused(filled, case, bad):
    @settings(max_examples=25, deadline=None)
    @given(i=st.integers(0, N - 1), value=bad)
    def check(i, value):
        assert_refused(filled, _encode(_set(VALID_DICT, _path(case, i), value)))

    check()


@FAST
@given(data=missing_or_extra_fields())
def test_missing_and_unknown_fields_are_refused(filled, data):
    assert_refused(filled, _encode(data))


@FAST
@given(data=hostile_bytes())
def test_hostile_files_are_refused(filled, data):
    assert_refused(filled, data)


def test_refusals_name_the_problem(filled):
    cases = {
        "schema_version must be 1, 2, 3 or 4": _set(VALID_DICT, ("schema_version",), 1.0),
        "newer than this app": _set(VALID_DICT, ("schema_version",), 5),
        "epochs[1].test_accuracy must be a number from 0 to 1": _set(VALID_DICT, ("epochs", 1, "test_accuracy"), 1.5),
        "epochs[2].epoch must be 3": _set(VALID_DICT, ("epochs", 2, "epoch"), 4),
        "config: batch_size must be from 1 to 1000": _set(VALID_DICT, ("config", "batch_size"), 5000),
        "missing the field 'status'": _drop(VALID_DICT, ("status",)),
        "status must be one of completed": _set(VALID_DICT, ("status",), "running"),
    }
    for says, data in cases.items():
        assert says in assert_refused(filled, _encode(data))
    # A run's file that says it is a sweep: refused as a sweep by the store, named as such by the run-file reader.
    labelled_sweep = _encode(_set(VALID_DICT, ("kind",), "sweep"))
    assert_refused(filled, labelled_sweep)
    with pytest.raises(RunFileError, match="only training runs can be imported"):
        parse_run_file(labelled_sweep)
    assert "not UTF-8" in assert_refused(filled, VALID_TEXT.encode("utf-16"))
    assert "NaN" in assert_refused(
        filled, VALID_TEXT.replace('"test_accuracy": 0.', '"test_accuracy": NaN, "x": 0.', 1).encode()
    )
    assert "more than 10 deep" in assert_refused(filled, b"[" * 100_000)


def test_files_that_contradict_themselves_are_refused_naming_the_field(filled):
    # Each passes the schema, and each made an absurd headline before it was refused (issue 18).
    with_flops = _set(VALID_DICT, ("device", "train_flops_per_sample"), 31_380)
    epoch = VALID_DICT["epochs"][1]
    cases = {
        # train_seconds 1e7 and samples/s 1e13: "263424709.8x faster" next to GFLOP/s 9.9.
        "epochs[1].samples_per_second must be the epoch's 1,000 training samples over its train_seconds": _set(
            _set(VALID_DICT, ("epochs", 1, "train_seconds"), 1e7), ("epochs", 1, "samples_per_second"), 1e13
        ),
        "epochs[0].warmup must be true: epoch 1, and only epoch 1, is the warm-up": _set(
            _set(VALID_DICT, ("epochs", 0, "warmup"), False), ("epochs", 2, "warmup"), True
        ),
        "epochs[1].gflops_per_second must be device.train_flops_per_sample x samples_per_second": _set(
            with_flops, ("epochs", 1, "gflops_per_second"), 31_380 * epoch["samples_per_second"] / 1e9 * 3
        ),
        "finished_at must not be before started_at": _set(
            VALID_DICT, ("finished_at",), "2026-11-30T07:59:00.000+00:00"
        ),
        "started_at must not be in the future": _set(VALID_DICT, ("started_at",), "9999-01-01T00:00:00.000+00:00"),
    }
    for says, data in cases.items():
        assert says in assert_refused(filled, _encode(data))
    # The consistent figures themselves pass: GFLOP/s that agree with the FLOPs and samples/s.
    agreeing = copy.deepcopy(with_flops)
    for e in agreeing["epochs"]:
        e["gflops_per_second"] = 31_380 * e["samples_per_second"] / 1e9
    assert parse_run_file(_encode(agreeing)).run_id == VALID.run_id


# -- the command line ------------------------------------------------------------------------
def test_cli_import_and_export_exit_codes(tmp_path, capsys):
    db = str(tmp_path / "runs.sqlite3")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(VALID_TEXT)
    bad.write_text(VALID_TEXT.replace('"completed"', '"finished"'))
    assert main(["import", str(good), "--db", db]) == 0
    assert capsys.readouterr().out == "Imported run gpu0run00001 from gpu-server (GPU:0, completed).\n"
    assert main(["import", str(good), "--db", db]) == 0
    assert capsys.readouterr().out == "Run gpu0run00001 from gpu-server is already in the history; nothing changed.\n"
    for path, says in ((bad, "status must be one of"), (tmp_path / "absent.json", "No such file")):
        assert main(["import", str(path), "--db", db]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {path}: ") and says in err[0]
    assert main(["export", "gpu0run00001", "--db", db]) == 0
    assert capsys.readouterr().out == VALID_TEXT + "\n"
    assert main(["export", "gpu0run00001", "--csv", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("device,execution,run_id,epoch,train_loss") and len(lines) == 1 + N
    assert lines[1].split(",")[:4] == ["GPU", "multi-step-loop", "gpu0run00001", "1"]
    assert main(["export", "nope", "--db", db]) == 1
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["export", "--db", db]) == 2  # neither a RUN_ID nor --all
    assert capsys.readouterr().err == "error: export takes a RUN_ID or --all, not both or neither.\n"


def test_cli_imports_a_zip_as_history_does_member_by_member_within_its_limits(tmp_path, capsys):
    from core.history import archive

    db, zipped, big, fake = (
        str(tmp_path / "runs.sqlite3"),
        tmp_path / "runs.zip",
        tmp_path / "big.zip",
        tmp_path / "x.zip",
    )
    members = {
        "run-1.json": VALID_TEXT,
        "run-2.json": make_result(run_id="zipped000002").to_json(),
        "bad.json": VALID_TEXT.replace('"completed"', '"finished"'),
        "huge.json": "0" * 6_000_000,  # over a file's 5 MiB unzipped
        "notes.txt": "not a run file: not read",
    }
    zipped.write_bytes(archive.zip_files(members))
    assert main(["import", str(zipped), "--db", db]) == 1  # two members refused, each in its own sentence
    said = capsys.readouterr()
    assert said.out.splitlines() == [
        "Imported run gpu0run00001 from gpu-server (GPU:0, completed).",
        "Imported run zipped000002 from gpu-server (GPU:0, completed).",
    ]
    err = said.err.splitlines()
    assert len(err) == 2 and err[0].startswith(f"error: {zipped}: bad.json: ") and "status must be one of" in err[0]
    assert err[1] == f"error: {zipped}: huge.json: it unzips to more than 5,242,880 bytes; a file is at most 5 MiB"
    with Store(db) as store:
        assert sorted(r.run_id for r in store.history()) == ["gpu0run00001", "zipped000002"]
    # The .zip itself at most the page's upload limit (5 MiB), and a file that only says .zip: one sentence each.
    big.write_bytes(b"PK" + bytes(6 * 2**20))
    fake.write_text(VALID_TEXT)
    for path, says in ((big, "the limit is 5,242,880 bytes (5 MiB)"), (fake, "this is not a readable .zip file")):
        assert main(["import", str(path), "--db", db]) == 1
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {path}: ") and says in err[0], err


def test_cli_import_of_a_bad_file_in_a_fresh_process_leaves_the_file_alone(tmp_path):
    db = tmp_path / "runs.sqlite3"
    with Store(db) as store:
        store.finish(make_result(run_id="local1"))
    before = {p.name: p.read_bytes() for p in tmp_path.glob("runs.sqlite3*")}
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"schema_version": 1, "config": {"dataset": NaN}}')
    proc = subprocess.run(
        [sys.executable, "-m", "core", "import", str(bad), "--db", str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "NaN" in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.glob("runs.sqlite3*")} == before
    with Store(db) as store:
        assert [r.run_id for r in store.history()] == ["local1"] and integrity_check(store) == "ok"


def test_a_zip_is_read_member_by_member_within_limits_counted_on_the_bytes_read():
    import tracemalloc
    import zipfile as zf

    from core.history import archive

    bomb = io.BytesIO()
    with zf.ZipFile(bomb, "w", zf.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("run-ok.json", VALID_TEXT)
        for i in range(25):
            z.writestr(f"big-{i}.json", b"0" * 6_000_000)  # 150 kB zipped, 150 MB unzipped
    tracemalloc.start()
    said = []
    try:
        for member in archive.zip_members(bomb.getvalue()):
            said.append(member)
        pytest.fail("a .zip of 1.2 GB unzipped was read whole")
    except archive.ArchiveError as err:
        stopped = str(err)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MiB held at once"  # one member at a time, not 200 of them
    assert said[0].name == "run-ok.json" and said[0].data == VALID_TEXT.encode() and said[0].problem is None
    # The size said is the one read, never a header's claim nor the limit plus one ("5,000,001 bytes" for 6 MB).
    assert said[1] == archive.Member(
        "big-0.json", None, "it unzips to more than 5,242,880 bytes; a file is at most 5 MiB"
    )
    assert stopped.startswith("the .zip unzips to more than 104,857,600 bytes in all (at big-")
    assert len(said) < 25  # stopped at the budget (20 members of 5 MiB read), not after all of them


def test_a_zip_of_more_than_200_files_is_refused_before_any_is_read():
    from core.history import archive

    data = archive.zip_files({f"run-{i}.json": "{}" for i in range(201)})
    with pytest.raises(archive.ArchiveError, match="holds 201 .json files; at most 200 are allowed"):
        next(archive.zip_members(data))
