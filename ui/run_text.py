"""How the page names runs and sweeps, and the sentences it says about them: plain text, times, labels.

Pure functions of what the store or the runner hold (no streamlit, no TensorFlow), tested on hand-made values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from core.history.rows import HistoryRow, SweepRow
from core.language import progress
from core.language.i18n import _
from core.machine.device_spec import parse_device_name
from core.results import RunResult, SweepPoint
from core.settings.config import TrainConfig
from ui.labels import SETTING_WORDS, distinct_labels

# Characters that start emphasis, code, links, images, HTML, tables or LaTeX anywhere in a line; a colon before a
# letter (a Streamlit directive :red[x], an emoji :smile:, an icon :material/x:) and an ampersand before a letter
# or # (an entity, &lt;). "GPU:0" and "a & b" stay as they are.
_MARKDOWN = re.compile(r"([\\`*_\[\]#!|<>~$]|:(?=[A-Za-z])|&(?=[A-Za-z#]))")


# GFM turns www.x, http://x and a@b into links after parsing, escapes or not: a word joiner (U+2060, invisible)
# inside each of those three marks breaks the pattern and leaves the text as it reads.
_AUTOLINK = re.compile(r"(?i)(?<=www)(?=\.)|(?=://)|(?=@)")


def plain(text: str) -> str:
    """Text with Markdown's special characters escaped and no autolink left, so a host name from an imported file
    (www.evil.example, :red[x]) stays text."""
    return _MARKDOWN.sub(r"\\\1", _AUTOLINK.sub("\u2060", text))


def short_time(iso: str | None) -> str:
    """'2026-11-30 09:14' in this machine's time zone (files record UTC), or '?' when unknown."""
    if not iso:
        return "?"
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return (when.astimezone() if when.tzinfo else when).strftime("%Y-%m-%d %H:%M")


def where(row: HistoryRow) -> str:
    """'GPU:0 on gpu-server', 'NODE-B/CPU:0 on vm': where the variables lived (else the device asked for), the Ray
    node when it ran on one, and the host."""
    spec = parse_device_name(row.device)
    device = row.variables_on or (spec.local.upper() if spec else "?")
    node = spec.node if spec else None
    where_from = f"{node.upper() + '/' if node else ''}{device}"
    return _("{device} on {host}").format(device=where_from, host=row.host or _("an unknown host"))


def run_labels(rows: Sequence[HistoryRow], configs: Sequence[dict] | None = None) -> list[str]:
    """Chart labels for overlaid runs: 'GPU:0 on gpu-server', then what differs ('CPU:0 on vm (plain fit)').

    configs: the runs' RunResult.config, whose differences (execution, batch size, ...) name runs of the
    same device apart; runs still alike are told apart by start time, then by id.
    """
    labels = distinct_labels([where(r) for r in rows], configs or [_row_config(r) for r in rows])
    when = {lb: {short_time(r.when) for b, r in zip(labels, rows, strict=True) if b == lb} for lb in labels}
    labels = [  # the start time where it tells alike runs apart (one Run's runs start in the same minute)
        f"{lb} · {short_time(r.when)}" if len(when[lb]) > 1 else lb for lb, r in zip(labels, rows, strict=True)
    ]
    # Six characters of the id where they tell the runs apart; the whole id where not (one Run's ids share their group).
    short = [r.run_id[:6] for r in rows]
    ids = short if len(set(short)) == len(short) else [r.run_id for r in rows]
    return [f"{lb} · {i}" if labels.count(lb) > 1 else lb for lb, i in zip(labels, ids, strict=True)]


def _row_config(row: HistoryRow) -> dict:
    return {"execution": row.execution, "batch_size": row.batch_size, "model": row.model, "dataset": row.dataset}


def execution_words(row: HistoryRow) -> str:
    """'plain fit', 'multi-step loop', or '?'."""
    return SETTING_WORDS["execution"](row.execution)


def pick_label(row: HistoryRow) -> str:
    """One line naming a run in a picker: when, where, how, what, how it ended, and its id (so no two read alike)."""
    accuracy = f"{row.final_test_accuracy:.1%}" if row.final_test_accuracy is not None else _("no epochs")
    how = f" · {execution_words(row)}" if row.execution else ""
    what = _("{model} on {dataset}, batch {batch}").format(model=row.model, dataset=row.dataset, batch=row.batch_size)
    return f"{short_time(row.when)} · {where(row)}{how} · {what} · {accuracy} · {row.run_id}"


def config_differences(a: RunResult, b: RunResult) -> list[str]:
    """Settings two runs differ in besides the device, in the labels' words: 'batch 100 vs batch 256'."""
    words = {k: SETTING_WORDS.get(k, str) for k in TrainConfig.__dataclass_fields__}
    return [
        _("{a} vs {b}").format(a=words[k](a.config.get(k)), b=words[k](b.config.get(k)))
        for k in TrainConfig.__dataclass_fields__
        if k != "device" and a.config.get(k) != b.config.get(k)
    ]


def differences_sentence(a: RunResult, b: RunResult) -> str | None:
    """What else two compared runs differ in, said as so: 'Besides the device, ...' only where the devices differ."""
    differences = config_differences(a, b)
    if not differences:
        return None
    if where_ran(a) == where_ran(b):
        said = _(
            "Both on {device}, these runs differ in {differences}: the ratio is of training samples per second, "
            "so it compares the whole trainings."
        )
    else:
        said = _(
            "Besides the device, these runs differ in {differences}: the ratio is of training samples per second, "
            "so it compares the whole trainings, not the devices alone."
        )
    return said.format(device=where_ran(a), differences="; ".join(differences))


def where_ran(result: RunResult) -> str:
    """'CPU:0 on vm': where the run's variables lived (else the device asked for), and the host."""
    device = result.device.get("variables_on") or str(result.config.get("device") or "?").upper()
    return _("{device} on {host}").format(device=device, host=result.host.get("hostname") or _("an unknown host"))


def sweep_pick_label(row: SweepRow) -> str:
    """One line naming a stored sweep in a picker."""
    width = _(" ({units} units)").format(units=row.hidden_units) if row.hidden_units else ""
    devices = ", ".join(d.upper() for d in row.devices) or "?"
    what = _("{model} on {devices}").format(model=f"{row.model}{width}", devices=devices)
    return (
        f"{short_time(row.when)} · {what} · {row.host or _('an unknown host')}"
        f" · {progress.finished('point', row.points_measured, row.points_total)} · {progress.status_words(row.status)}"
    )


def idle_sentences(points: Sequence[SweepPoint], flops_per_sample: float | None, devices: dict) -> list[str]:
    """Per device, from its smallest measured batch: how much of a step the arithmetic would be at the square peak."""
    said, sentences = set(), []
    for p in sorted((p for p in points if p.step_ms), key=lambda p: p.batch_size):
        peak = (devices.get(p.device) or {}).get("peak_gflops")
        if p.device in said or not flops_per_sample or not peak:
            continue
        said.add(p.device)
        arithmetic_ms = p.batch_size * flops_per_sample / (peak * 1e9) * 1000
        sentence = _(
            "{device} at batch {batch}: a step is {mflop:,.2f} MFLOP, {us:,.1f} µs at this device's "
            "large-square-matmul peak of {peak:,.0f} GFLOP/s, but it took {took:,.0f} µs: "
            "at that peak the arithmetic would be {share:.1%} of the step (matmuls this small run far below it; "
            "the Train view's why times them at their shapes)."
        )
        sentences.append(
            sentence.format(
                device=p.label,
                batch=p.batch_size,
                mflop=p.batch_size * flops_per_sample / 1e6,
                us=arithmetic_ms * 1000,
                peak=peak,
                took=p.step_ms * 1000,
                share=min(arithmetic_ms / p.step_ms, 1),
            )
        )
    return sentences
