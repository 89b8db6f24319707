"""python -m core: exit codes, one-sentence errors, per-epoch lines and the JSON file."""

import json

import pytest

from core.cli import main
from tests.conftest import run_cli

TINY = ["--dataset", "synthetic", "--train-subset", "300", "--batch-size", "50"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["train", "--epochs", "0"], "epochs must be from 1 to 1000"),
        (["train", "--epochs", "ten"], "argument --epochs: invalid int value"),
        (["train", "--learning-rate", "nan"], "learning_rate must be a finite number"),
        (["train", "--batch-size", "70000"], "batch_size must be from 1 to 60000"),
        (["train", "--device", "tpu"], "device must be cpu, gpu"),
        (["train", "--model", "vgg"], "argument --model: invalid choice"),
        (["train", "--frobnicate"], "unrecognized arguments"),
        (["launch"], "invalid choice"),
    ],
)
def test_bad_flags_exit_2_with_one_sentence(args, says, capsys):
    with pytest.raises(SystemExit) as info:
        code = main(args)
        raise SystemExit(code)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]


def test_train_prints_epochs_and_summary_and_writes_json(tmp_path):
    out, traces, db = tmp_path / "run.json", tmp_path / "logs", tmp_path / "runs.sqlite3"
    proc = run_cli("train", *TINY, "--epochs", "3", "--json", str(out), "--profile-dir", str(traces), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    epoch_lines = [line for line in lines if line.startswith("epoch")]
    assert len(epoch_lines) == 3 and "warm-up" in epoch_lines[0] and "warm-up" not in epoch_lines[1]
    assert (
        lines[-1].startswith("completed: steady-state epoch") and "(the mean of epochs 2 and later, 2-3)" in lines[-1]
    )
    assert "Traceback" not in proc.stderr and "oneDNN" not in proc.stderr
    # The seconds between epochs 1 and 2 are said once, on stderr: the epochs' lines stay alone on stdout.
    assert proc.stderr.count("epoch 1 done; measuring the step, untimed") == 1 and "measuring" not in proc.stdout
    data = json.loads(out.read_text())
    assert data["status"] == "completed" and len(data["epochs"]) == 3
    assert data["config"]["dataset"] == "synthetic" and data["config"]["train_subset"] == 300
    # What auto became, before the first epoch, as the run then recorded it.
    assert lines[0].endswith(f"XLA {'on' if data['device']['jit_compile'] else 'off'} (auto)"), lines[0]
    # The trace, where TensorBoard's profile plugin looks (plugins/profile/SESSION/HOST.xplane.pb), an XSpace that
    # reads back to the run's own summary of it; the history keeps the same bytes.
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    from core.engine import trace
    from core.history.profiles import xspace
    from core.history.store import Store

    (written,) = traces.glob(f"plugins/profile/{data['run_id']}/*.xplane.pb")
    assert f"trace written to {written}" in proc.stdout and xplane_pb2.XSpace.FromString(written.read_bytes()).planes
    summary = data["measured"]["trace"]
    assert trace.read(written.read_bytes(), summary["steps"])["step"] == pytest.approx(summary["step_seconds"])
    with Store(db) as store:
        assert xspace(store.trace(data["run_id"])) == written.read_bytes()
    assert "TensorFlow's profiler traced" in proc.stdout and "A model, not a measurement" in proc.stdout


def test_missing_gpu_is_a_sentence_not_a_traceback(tmp_path):
    from core.engine import devices

    out, db = tmp_path / "run.json", tmp_path / "runs.sqlite3"
    proc = run_cli("train", *TINY, "--device", "gpu", "--epochs", "1", "--json", str(out), "--db", str(db))
    if devices.gpu_count():  # a machine with a GPU trains there instead
        assert proc.returncode == 0 and json.loads(out.read_text())["device"]["variables_on"] == "GPU:0"
        return
    assert proc.returncode == 1
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: No GPU is visible") and "Traceback" not in proc.stderr
    assert not out.exists() and not db.exists()  # refused before a run row (or a history file) is written


def test_devices_json(hardware_check_run):
    """The session's own `devices --json` (tests/conftest.py makes it once for every test and server)."""
    assert hardware_check_run["returncode"] == 0, hardware_check_run["stderr"]
    info = json.loads(hardware_check_run["stdout"])
    assert list(info) == [
        "hostname",
        "platform",
        "python",
        "tensorflow",
        "keras",
        "cpu_model",
        "cpu_cores",
        "logical_cpus",
        "cuda_build",
        "cudnn_build",
        "gpus",
        "limits",
    ]
    # Each device's peak and bandwidth: the median of five tries, every try kept (the spread).
    cpu = info["limits"]["/CPU:0"]
    assert len(cpu["peak_tries"]) == len(cpu["bandwidth_tries"]) == 5
    assert (
        cpu["peak_gflops"] == sorted(cpu["peak_tries"])[2] and cpu["bandwidth_gbs"] == sorted(cpu["bandwidth_tries"])[2]
    )
