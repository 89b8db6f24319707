"""Benchmark: is the why measured? Each model's traced step against the run's own timer, and the line's prediction of
a batch size it was not fitted on, against that batch's timed step (core.analysis.why).

For the tutorial's softmax (batch 100, SGD 0.1, the multi-step loop), the Quick demo's MLP (128 units, Adam, 30,000
images) in both of the Quick demo's modes (the multi-step loop and plain model.fit) and the CNN (6,000 images), on
this machine's CPU: one run each, then per model

    why_traced: MODEL ops S gaps G trace_vs_timer R
        S and G: the trace's ops and the gaps between them, seconds per step; R: the trace's step over the run's own
        timed step (a different clock, on other steps of another copy of the model): the goal is 0.8-1.2;
    why_predicted: MODEL batch B predicted P timed T ratio R
        the line through the run's step and the other batch size's, at the third batch size B: R = T / P, within
        0.75-1.33 wherever the page gives advice (outside it, the page says the line does not hold and advises
        nothing);
    why_cost: MODEL trace S s traced_step +X% file K kB
        what tracing cost: the whole tracing's seconds, once per run, and how much slower the traced copy's step
        was than the same copy untraced.

    .venv/bin/python bench/why.py [--device cpu] [--epochs 4] [--models softmax,mlp,mlp-fit,cnn]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import why_sentences  # noqa: E402
from core.analysis import why
from core.engine.training import train  # noqa: E402
from core.settings.config import TrainConfig  # noqa: E402

TUTORIAL = dict(dataset="fashion_mnist", optimizer="sgd", learning_rate=0.1, batch_size=100)
QUICK = dict(
    dataset="fashion_mnist", model="mlp", optimizer="adam", learning_rate=0.001, batch_size=100, train_subset=30_000
)
MODELS = {
    "softmax": dict(TUTORIAL, model="softmax"),
    "mlp": dict(QUICK, execution="multi-step-loop"),
    "mlp-fit": dict(QUICK, execution="keras-fit"),
    "cnn": dict(TUTORIAL, model="cnn", optimizer="adam", learning_rate=0.001, train_subset=6_000),
}


def lines_for(name: str, result) -> list[str]:
    """The bench's lines for one run, and its why as the page says it (printed above them)."""
    w = why.explain(result)
    if w is None or w.trace is None:
        return [f"why_traced: {name} none (the run traced no window)"]
    t = w.trace
    print(f"{name}: {why_sentences.trace_check(w)}\n  {why_sentences.trace_parts(w)}", flush=True)
    for said in (why_sentences.bound_sentence(w), why_sentences.line_sentence(w), why_sentences.advice(w)):
        print(f"  {said}", flush=True)
    found = [
        f"why_traced: {name} ops {sum(t.ops.values()):.3g} gaps {sum(t.gaps.values()):.3g} "
        f"trace_vs_timer {w.trace_vs_timer:.2f}"
    ]
    if p := w.prediction:
        found.append(
            f"why_predicted: {name} batch {p.batch} predicted {p.predicted:.3g} timed {p.timed:.3g} ratio {p.ratio:.2f}"
        )
    cost = t.step_seconds / t.untraced_step_seconds - 1
    found.append(
        f"why_cost: {name} trace {t.cost_seconds:.2f} s traced_step {cost:+.0%} file {t.file_bytes / 1e3:.0f} kB"
    )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=4, help="epochs per run (epoch 1 is warm-up)")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    lines = []
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit(f"--models: {name!r} is not one of {', '.join(MODELS)}.")
        result = train(TrainConfig(**MODELS[name], device=args.device, epochs=args.epochs))
        if result.status != "completed":
            sys.exit(f"{name}: training {result.status}: {result.error}")
        lines += lines_for(name, result)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
