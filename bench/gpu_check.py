"""make gpu-check: everything a first GPU machine should confirm, in one go, into artifacts/gpu-check/.

Needs only this repository and pip install "tensorflow[and-cuda]" (with an NVIDIA driver). Steps, each a
subprocess whose output is kept as STEP.txt beside the run and sweep JSON files it writes:
the tests marked gpu; CPU vs GPU for the tutorial and for the CNN; a precision and an XLA comparison on
the GPU; the two benchmarks; a batch-size sweep on both devices. Then summary.md: each step, its exit
status and its last lines. Without a GPU it stops at once with one sentence.

    .venv/bin/python bench/gpu_check.py [--out artifacts/gpu-check]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
FAST = ["--dataset", "synthetic", "--train-subset", "20000"]


def steps(out: Path, bfloat16: bool) -> dict[str, list[str]]:
    """Step name -> command; every JSON goes to `out`, every run to `out`/history.db (not the user's history)."""
    db = ["--db", str(out / "history.db")]
    core = [PY, "-m", "core"]
    precisions = "float32,mixed_float16" + (",mixed_bfloat16" if bfloat16 else "")
    return {
        "gpu-tests": [
            PY,
            "-m",
            "pytest",
            "-m",
            "gpu",
            "-q",
            "tests/test_gpu.py",
            f"--junitxml={out / 'gpu-tests.xml'}",
        ],
        "tutorial-cpu-vs-gpu": [
            *core,
            "compare",
            "--axis",
            "device",
            "--values",
            "cpu,gpu",
            "--json",
            str(out / "tutorial.json"),
            *db,
        ],
        "cnn-cpu-vs-gpu": [
            *core,
            "compare",
            "--axis",
            "device",
            "--values",
            "cpu,gpu",
            "--model",
            "cnn",
            "--optimizer",
            "adam",
            "--learning-rate",
            "0.001",
            "--epochs",
            "3",
            "--json",
            str(out / "cnn.json"),
            *db,
        ],
        "precision-gpu": [
            *core,
            "compare",
            "--axis",
            "precision",
            "--values",
            precisions,
            "--device",
            "gpu",
            "--model",
            "mlp",
            "--hidden-units",
            "1024",
            "--batch-size",
            "1024",
            "--epochs",
            "5",
            "--optimizer",
            "adam",
            "--learning-rate",
            "0.001",
            *FAST,
            "--json",
            str(out / "precision.json"),
            *db,
        ],
        "xla-gpu": [
            *core,
            "compare",
            "--axis",
            "xla",
            "--values",
            "off,on",
            "--device",
            "gpu",
            "--model",
            "cnn",
            "--epochs",
            "3",
            "--optimizer",
            "adam",
            "--learning-rate",
            "0.001",
            *FAST,
            "--json",
            str(out / "xla.json"),
            *db,
        ],
        "bench-train-speed": [PY, "bench/train_speed.py", "--device", "gpu"],
        "bench-precision-xla": [PY, "bench/precision_xla.py", "--device", "gpu"],
        "sweep-cpu-gpu": [
            *core,
            "sweep",
            "--devices",
            "cpu,gpu",
            "--model",
            "mlp",
            "--hidden-units",
            "1024",
            "--json",
            str(out / "sweep.json"),
            *db,
        ],
    }


def find_gpus() -> list[dict]:
    """The GPUs `python -m core devices --json` lists; [] if none or the check failed."""
    done = subprocess.run([PY, "-m", "core", "devices", "--json"], cwd=ROOT, capture_output=True, text=True)
    try:
        return list(json.loads(done.stdout).get("gpus") or []) if done.returncode == 0 else []
    except ValueError:
        return []


def main() -> int:
    """Run every step; 0 only if all of them passed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "artifacts" / "gpu-check"))
    args = parser.parse_args()
    gpus = find_gpus()
    if not gpus:
        print(
            "gpu-check: no GPU found: TensorFlow lists none here; it needs an NVIDIA GPU, its driver and "
            'pip install "tensorflow[and-cuda]".',
            file=sys.stderr,
        )
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    capability = str(gpus[0].get("compute_capability") or "0")
    bfloat16 = float(capability) >= 8.0  # Ampere and later
    lines = [f"# gpu-check on {gpus[0].get('name')} (compute capability {capability})", ""]
    failed = 0
    for name, command in steps(out, bfloat16).items():
        print(f"gpu-check: {name} ...", flush=True)
        began = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - began
        (out / f"{name}.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
        failed += done.returncode != 0
        verdict = "passed" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        tail = (done.stdout.strip() or done.stderr.strip()).splitlines()[-8:]
        lines += [f"## {name}: {verdict}, {seconds:.0f} s", "", "```", *tail, "```", ""]
        print(f"gpu-check: {name} {verdict}", flush=True)
    (out / "summary.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"gpu-check: {len(steps(out, bfloat16)) - failed} steps passed, {failed} failed; see {out / 'summary.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
