"""Batch-size sweep: validated config, real timings on the CPU, the crossover in words, the file format."""

import json
import signal
import subprocess
import sys
import time

import pytest

from core.cli import main
from core.engine import limits, models, peak
from core.engine.sweep import run_sweep
from core.history.importer import RunFileError, validate_sweep
from core.results import SweepPoint, SweepResult
from core.results.crossover import crossover_sentence
from core.settings.config import ConfigError, SweepConfig
from tests.conftest import ROOT, borrowed, run_cli

QUICK = dict(model="softmax", batch_sizes=(16, 256), steps=30, repeats=3)


# -- the config ------------------------------------------------------------------------------
def test_config_normalises_what_it_is_given():
    config = SweepConfig(devices="CPU, gpu:1", batch_sizes="256,16,64,16", steps=None)
    assert config.devices == ("cpu", "gpu:1")
    assert config.batch_sizes == (16, 64, 256)  # sorted, duplicates dropped
    assert config.progress_total == 6
    assert SweepConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


@pytest.mark.parametrize(
    ("kwargs", "field", "says"),
    [
        (
            dict(devices="cpu,tpu"),
            "devices",
            "devices must each be cpu, gpu, gpu:N, cpu:N, gpu:all or cpu:all, optionally after NODE/ for a Ray node, "
            "not 'tpu'",
        ),
        (dict(devices=("gpu", "gpu:0")), "devices", "devices lists gpu:0 twice"),
        (dict(devices=()), "devices", "devices must list 1 to 8 devices"),
        (dict(batch_sizes="16,x"), "batch_sizes", "batch_sizes must be a whole number from 1 to 65536"),
        (dict(batch_sizes=(0, 16)), "batch_sizes", "batch_sizes must be from 1 to 65536 for each batch size, not 0"),
        (dict(steps=0), "steps", "steps must be from 1 to 100000 (or none, for auto), not 0"),
        (dict(repeats=2.5), "repeats", "repeats must be a whole number from 1 to 50"),
        (dict(hidden_units=0), "hidden_units", "hidden_units must be from 1 to 16384"),
        (dict(model="vgg"), "model", "model must be one of softmax, mlp, cnn"),
    ],
)
def test_bad_settings_name_the_field(kwargs, field, says):
    with pytest.raises(ConfigError) as info:
        SweepConfig(**kwargs)
    assert info.value.field == field
    assert says in str(info.value)


def test_importing_the_sweep_api_loads_neither_tensorflow_nor_pandas():
    # The dashboard builds a SweepConfig on its first render, where TensorFlow must not load.
    code = "import sys, core.engine.sweep, core.runner; print(sorted({'tensorflow', 'pandas'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the crossover in words ----------------------------------------------------------------
def _points(device: str, rates: dict[int, float | None]) -> list[SweepPoint]:
    return [SweepPoint(device, batch, 10, rate, rate, rate) for batch, rate in rates.items()]


CPU = {16: 50_000, 64: 120_000, 256: 200_000, 1024: 260_000, 4096: 280_000}


@pytest.mark.parametrize(
    ("gpu", "sentence"),
    [
        ({16: 9_000, 64: 40_000, 256: 300_000, 1024: 1e6, 4096: 3e6}, "GPU faster from batch 256."),
        (
            {16: 9_000, 64: 40_000, 256: 150_000, 1024: 200_000, 4096: 250_000},
            "No crossover in this range (CPU faster at every batch size).",
        ),
        (
            {16: 60_000, 64: 2e5, 256: 5e5, 1024: 1e6, 4096: 3e6},
            "GPU faster at every batch size in this range (16 to 4096).",
        ),
        (
            {16: 60_000, 64: 2e5, 256: 1e5, 1024: 1e5, 4096: 1e5},
            "GPU faster up to batch 64; CPU faster from batch 256.",
        ),
        (
            {16: 60_000, 64: 1e5, 256: 3e5, 1024: 1e5, 4096: 1e5},
            "No clean crossover: GPU faster at batch 16 and 256, CPU at 64, 1024 and 4096.",
        ),
        # Out of memory at the big batches: only batch sizes measured on both devices count.
        ({16: 9_000, 64: 40_000, 256: 300_000, 1024: None, 4096: None}, "GPU faster from batch 256."),
    ],
)
def test_crossover_sentence_for_given_numbers(gpu, sentence):
    assert crossover_sentence(_points("cpu", CPU) + _points("gpu", gpu)) == sentence


def test_crossover_uses_the_cpu_as_baseline_whatever_the_order():
    gpu = {16: 9_000, 64: 40_000, 256: 300_000, 1024: 1e6, 4096: 3e6}
    assert crossover_sentence(_points("gpu", gpu) + _points("cpu", CPU)) == "GPU faster from batch 256."
    two = crossover_sentence(_points("cpu", CPU) + _points("gpu:0", gpu) + _points("gpu:1", {16: 1.0, 64: 1e6}))
    assert two == "GPU:0 faster from batch 256. GPU:1 faster from batch 64."


def test_crossover_needs_two_devices():
    assert crossover_sentence(_points("cpu", CPU)) == "A crossover needs two devices measured, e.g. cpu and gpu."
    assert crossover_sentence([]) == "A crossover needs two devices measured, e.g. cpu and gpu."
    assert crossover_sentence(_points("cpu", {16: 1.0}) + _points("gpu", {64: 2.0})).startswith("No batch size")


# -- real sweeps on the CPU ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def cpu_sweep():
    seen = []
    result = run_sweep(SweepConfig(**QUICK), on_point=lambda point, _: seen.append(point.batch_size))
    return result, seen


def test_cpu_sweep_measures_positive_sensible_throughput(cpu_sweep):
    result, seen = cpu_sweep
    assert result.status == "completed", result.error
    assert seen == [16, 256]
    small, large = result.points
    for point in result.points:
        assert point.error is None and point.steps == 30
        assert len(point.samples_per_second_repeats) == 3
        assert 0 < point.samples_per_second_min <= point.samples_per_second <= point.samples_per_second_max
        assert point.compile_seconds > 0 and point.warmup_seconds > 0
    # 16x more work per step for a few more microseconds: small batches pay the per-step overhead (the direction is
    # the claim; a ratio varies with the load).
    assert large.samples_per_second > small.samples_per_second
    assert large.step_ms > small.step_ms


def test_cpu_sweep_reports_gflops_and_utilisation_from_the_flop_count(cpu_sweep):
    result, _ = cpu_sweep
    flops = models.flops_per_sample("softmax").train
    assert result.model["train_flops_per_sample"] == flops == 31_380
    assert result.model["parameters"] == 7_850
    cpu = result.devices["cpu"]
    assert cpu["variables_on"] == "CPU:0" and cpu["tf_device"] == "/CPU:0"
    shared = limits.shared("/CPU:0", wait=0)  # a server's figure where one is shared, else this process's
    assert cpu["peak_gflops"] == pytest.approx(shared["peak_gflops"] if shared else peak.measure("/CPU:0").gflops)
    for point in result.points:
        assert point.gflops_per_second == pytest.approx(flops * point.samples_per_second / 1e9)
        assert point.utilisation == pytest.approx(point.gflops_per_second / cpu["peak_gflops"])


def test_sweep_file_round_trips_and_says_what_it_is(cpu_sweep):
    result, _ = cpu_sweep
    data = json.loads(result.to_json())
    assert (data["schema_version"], data["kind"], data["status"]) == (1, "sweep", "completed")
    assert "crossover" not in data  # derived on read, from the points (core.results.crossover)
    again = SweepResult.from_dict(data)
    assert crossover_sentence(again.points) == "A crossover needs two devices measured, e.g. cpu and gpu."
    assert again.points == result.points and again.config == result.config
    frame = again.to_frame()
    assert list(frame["batch_size"]) == [16, 256] and list(frame["label"]) == ["CPU", "CPU"]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d.pop("kind"), '"kind": "sweep"'),
        (lambda d: d.update(schema_version=99), "schema_version 99"),
        (lambda d: d["points"][0].update(samples_per_second=-1), "points[0].samples_per_second must be a finite"),
        (lambda d: d["points"][0].update(batch_size="big"), "points[0].batch_size must be a whole number"),
        (lambda d: d["points"][1].update(colour="red"), "points[1] has an unknown field 'colour'"),
    ],
)
def test_a_bad_sweep_file_is_refused_in_one_sentence(cpu_sweep, change, says):
    data = json.loads(cpu_sweep[0].to_json())
    change(data)
    with pytest.raises(RunFileError) as info:
        validate_sweep(data)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_a_missing_gpu_fails_before_anything_is_timed():
    from core.engine import devices

    if devices.gpu_count():
        pytest.skip("this machine has a GPU; the refusal is for machines without one")  # never true in CI
    result = run_sweep(SweepConfig(devices=("cpu", "gpu"), **QUICK))
    assert result.status == "failed" and result.points == []
    assert result.error.startswith("No GPU is visible to TensorFlow")


def test_stop_is_honoured_at_the_next_check():
    config = SweepConfig(model="mlp", batch_sizes=(16, 64, 256, 1024), repeats=5)  # ~10 s if not stopped
    points, asked = [], []

    def should_stop() -> bool:  # stop once the first point is in: mid-sweep, whatever the machine's pace
        asked.append(bool(points))
        return asked[-1]

    began = time.monotonic()
    result = run_sweep(config, on_point=lambda point, _: points.append(point), should_stop=should_stop)
    print(f"the sweep ran {time.monotonic() - began:.1f} s")  # its pace is printed, not asserted (a loaded CI)
    assert result.status == "cancelled"
    # The first "stop" ended it: every step asks first (tests/test_job.py), so none ran after it.
    assert asked.count(True) == 1 and len(result.points) == 1
    assert all(p.samples_per_second for p in result.points)  # finished points kept, none half-done


# -- through the runner and the command line ------------------------------------------------------
def test_the_runner_runs_a_sweep_and_reports_points(session_runner):
    events, described = [], []
    # Not get_runner(): that one records into the user's history.
    with borrowed(session_runner) as runner:

        def listen(event, job, payload):
            events.append(event)
            if event == "point":
                described.append(runner.status(job.run_id).describe())

        runner.add_listener(listen)
        run_id = runner.submit(SweepConfig(**QUICK))
        status = runner.wait(run_id, timeout=120)
    assert status.state == "completed", status.error
    assert events == ["submitted", "started", "point", "point", "finished"]
    assert described == ["running (point 2 of 2)", "running (point 2 of 2)"]
    assert status.unit == "point" and status.total == 2
    assert [p.batch_size for p in status.items] == [16, 256]
    assert isinstance(status.result, SweepResult)


def test_cli_sweep_prints_a_table_and_writes_a_valid_json_file(tmp_path):
    out = tmp_path / "sweep.json"
    proc = run_cli(
        "sweep", "--model", "softmax", "--batch-sizes", "16,256", "--steps", "20", "--repeats", "2", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.strip().splitlines()
    rows = [line.split() for line in lines if line.startswith("CPU ")]
    assert [row[1] for row in rows] == ["16", "256"]
    assert lines[-1].startswith("completed: 2 of 2 points measured.")
    data = json.loads(out.read_text())
    assert data["kind"] == "sweep" and data["config"]["batch_sizes"] == [16, 256]
    assert [p["samples_per_second"] > 0 for p in data["points"]] == [True, True]
    assert SweepResult.from_dict(data).status == "completed"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["sweep", "--batch-sizes", "16,x"], 2, "batch_sizes must be a whole number"),
        (["sweep", "--devices", "cpu,npu"], 2, "devices must each be cpu, gpu"),
        (["sweep", "--steps", "-3"], 2, "steps must be from 1 to 100000"),
        (["sweep", "--repeats", "many"], 2, "argument --repeats: invalid int value"),
        (["sweep", "--devices", "cpu,gpu", "--batch-sizes", "16"], 1, "No GPU is visible"),
    ],
)
def test_cli_refusals_are_one_sentence(args, code, says, capsys):
    from core.engine import devices

    if "gpu" in args and devices.gpu_count():
        pytest.skip("this machine has a GPU")  # never true in CI
    previous = signal.getsignal(signal.SIGINT)  # the command installs a Ctrl-C handler
    try:
        with pytest.raises(SystemExit) as info:
            raise SystemExit(main(args))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert info.value.code == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and err[0].startswith("error: ")


def test_a_failed_point_survives_the_file_and_stays_out_of_the_crossover():
    ok = _points("cpu", {16: 5e4, 4096: 3e5}) + _points("gpu", {16: 1e4})
    result = SweepResult(
        config=SweepConfig(devices=("cpu", "gpu"), batch_sizes=(16, 4096)).to_dict(), status="completed"
    )
    result.points = ok + [SweepPoint("gpu", 4096, 0, None, None, None, error="Out of memory on gpu from batch 4096.")]
    again = SweepResult.from_dict(json.loads(result.to_json()))
    assert again.points == result.points
    assert crossover_sentence(again.points) == "No crossover in this range (CPU faster at every batch size)."
    assert again.to_frame()["samples_per_second"].isna().tolist() == [False, False, False, True]
