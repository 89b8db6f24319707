"""Every view in Simplified Chinese and in English through AppTest: no English left on a Chinese page (a rule that
allows the names a reader looks up, numbers, units, code and this machine's own names), no Chinese on an English
one; `?lang=` and the sidebar's switch choose the language, and it survives a change of view.

One session per language walks Train, History (two stored runs overlaid: the headline, charts, numbers and what
the models learned), Scaling (a stored sweep: its chart, crossover, table and roofline) and Devices.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from streamlit.testing.v1 import AppTest

from core.history.store import get_store
from core.language import i18n
from core.machine import hardware_check
from tests.sample_runs import make_result
from tests.test_app import APP, PROBE_WAIT_S, page
from tests.test_scaling_app import server_sweep
from ui import access, lang

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# Names a reader looks up (Keras' and TensorFlow's own words, the datasets and models, units) stay as they are.
NAMES = {
    "tensorflow",
    "keras",
    "xla",
    "cpu",
    "gpu",
    "gpus",
    "fit",
    "softmax",
    "mlp",
    "cnn",
    "relu",
    "sgd",
    "adam",
    "mnist",
    "fashion-mnist",
    "tensorboard",
    "python",
    "linux",
    "mac",
    "apple",
    "metal",
    "nvidia",
    "cuda",
    "cudnn",
    "ray",
    "mirroredstrategy",
    "pluggabledevice",
    "dtype",
    "policy",
    "json",
    "csv",
    "zip",
    "vs",
    "auto",
    "on",
    "off",
    "bootstrap",
    "roofline",
    "gflop",
    "mflop",
    "flop",
    "flops",
    "mib",
    "mb",
    "gb",
    "ms",
    "µs",
    "english",
    "hparams",
    "logdir",  # TensorBoard's plugin and its flag
    "epochs",
    "synthetic",  # model.fit's argument beside 轮次; the CLI's --dataset name
}
STRING_FIELDS = {"body", "label", "help", "placeholder", "options", "captions", "content", "text", "caption"}


def strings(message) -> list[str]:
    """The words an element's proto shows: labels, help, options, captions, bodies (not its data or ids)."""
    found = []
    for field, value in message.ListFields():
        items = list(value) if hasattr(value, "__len__") and not isinstance(value, str | bytes) else [value]
        if field.message_type is not None:
            found += [w for item in items for w in strings(item)]
        elif field.name in STRING_FIELDS:
            found += [v for v in items if isinstance(v, str)]
    return found


def chart_words(spec) -> list[str]:
    """A Vega-Lite spec's titles, subtitles, tooltips' titles and the words its label expressions print."""
    if isinstance(spec, list):
        return [w for item in spec for w in chart_words(item)]
    if not isinstance(spec, dict):
        return []
    found = []
    for key, value in spec.items():
        if key in ("title", "subtitle", "text") and isinstance(value, str):
            found.append(value)
        elif key == "labelExpr":
            found += re.findall(r"'([^']*)'", value)
        elif key not in ("datasets", "data"):
            found += chart_words(value)
    return found


def page_words(at: AppTest) -> list[str]:
    """Everything the page on screen says, in its sidebar too; code blocks are code."""
    found = []
    for node in at._tree:
        proto = getattr(node, "proto", None)
        if proto is None or getattr(node, "type", "") == "code":
            continue
        if getattr(proto, "body", "").lstrip().startswith("<style"):  # ui.layout's style sheet: not words
            continue
        if getattr(node, "type", "") == "arrow_vega_lite_chart":
            found += chart_words(json.loads(proto.spec))
        elif getattr(node, "type", "") == "dataframe":
            found += [str(c) for c in node.value.columns]
            if node.value.isna().any(axis=None):  # an empty cell: the grid writes "None" where no placeholder is set
                found.append(proto.placeholder or "None")
        else:
            found += strings(proto)
    return [w for w in found if w.strip()]


def english_left(text: str, own: set[str]) -> list[str]:
    """English words in `text` outside code, this machine's and the runs' own names, NAMES, acronyms and identifiers."""
    text = re.sub(r"\\([^A-Za-z0-9\s])", r"\1", text)  # Markdown's escapes: the reader sees mixed_bfloat16, not mixed\_
    for name in sorted(own, key=len, reverse=True):  # first: a name may hold a link or code (a file's host name)
        text = text.replace(name, " ")
    text = re.sub(r"`[^`]*`|https?://\S+", " ", text)
    left = []
    for word in re.findall(r"[A-Za-zµ][A-Za-z0-9_.:/+'µ-]*", text):
        word = word.strip(".:'-")
        if len(word) < 2 or word.isupper() or re.search(r"[0-9_./:]", word) or word.lower() in NAMES:
            continue
        if any(word in name for name in own if re.fullmatch(r"[0-9a-f-]{6,}", name)):  # in a run's id ('fd' of 93fd…)
            continue
        left.append(word)
    return left


@pytest.fixture(scope="module")
def stored() -> dict[str, object]:
    """Two stored runs of one comparison, and a GPU server's sweep, as the History and Scaling views show them."""
    group = f"{uuid.uuid4().int % 10**8:08d}"  # digits: its labels' short ids are no words
    runs = [make_result(run_id=f"{group}-{i}", seed=i) for i in (1, 2)]
    sweep = server_sweep()
    stopped = make_result(run_id=f"{group}-0", epochs=0, status="cancelled")  # no accuracy: empty table cells
    for result in (*runs, sweep, stopped):
        get_store().finish(result)
    return {"runs": [r.run_id for r in runs], "sweep": sweep.run_id, "stopped": stopped.run_id}


def session(code: str) -> AppTest:
    """A browser session opened at ?lang=code, after the hardware check."""
    assert hardware_check.wait(PROBE_WAIT_S).state == hardware_check.READY
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params[lang.PARAM] = code
    at.session_state[access.KEY] = access.check(None, None, None)
    return at.run()


def views_said(at: AppTest, stored: dict) -> dict[str, list[str]]:
    """Each view's words: Train, History with the two runs overlaid, Scaling with the sweep, Devices."""
    said = {"Train": page_words(page("Train", at))}
    at.session_state["history_pick"] = stored["runs"]
    said["History"] = page_words(page("History", at))
    at.session_state["sweep_pick"] = stored["sweep"]
    said["Scaling"] = page_words(page("Scaling", at))
    said["Devices"] = page_words(page("Devices", at))
    assert not at.exception, [e.value for e in at.exception]
    return said


def own_names(stored: dict) -> set[str]:
    """Names the page shows as they are: this machine's (CPU model, host), the stored runs' hosts, GPUs and ids."""
    hw = hardware_check.result()
    values = [
        *map(str, hw.host.values()),
        *(str(g.get("name")) for g in hw.gpus),
        *stored["runs"],
        stored["sweep"],
        stored["stopped"],
    ]
    # Every stored run's id and its short form (the labels'), other tests' runs in this process's history too.
    # A comparison's group id too (its runs' id before '-N', in the History's "overlay a comparison again" picker).
    values += [v for r in get_store().history() for v in (r.run_id, r.run_id[:6], r.run_id.rpartition("-")[0])]
    values += [r.host for r in get_store().history() if r.host]  # a host name from a file is shown as it is
    return {v for v in values if v and v != "None"} | {"gpu-server", "NVIDIA H200", "AMD EPYC 9654 96-Core Processor"}


def test_every_view_in_chinese_leaves_no_english_sentence(stored):
    i18n.set_language("zh")  # AppTest formats a widget's value in this thread (its format_func): the page's language
    try:
        at = session("zh")
        said = views_said(at, stored)
    finally:
        i18n.set_language("en")
    own = own_names(stored)
    left = {view: sorted({w for text in words for w in english_left(text, own)}) for view, words in said.items()}
    where = {view: [t for t in said[view] if english_left(t, own)][:5] for view in said if left[view]}
    assert left == {view: [] for view in said}, (left, where)
    assert all(any(CJK.search(w) for w in words) for words in said.values())
    assert at.query_params[lang.PARAM] == "zh"  # still in the address after four changes of view


def test_every_view_in_english_has_no_chinese_and_the_switch_turns_the_page_chinese(stored):
    at = session("en")
    said = views_said(at, stored)
    chinese = {view: [w for w in words if CJK.search(w) and w != lang.NAMES["zh"]] for view, words in said.items()}
    assert chinese == {view: [] for view in said}
    assert "Run" in page_words(page("Train", at))
    (switch,) = [b for b in at.button_group if b.key == lang.SWITCH]
    switch.set_value("zh").run()
    assert at.query_params[lang.PARAM] == "zh"
    assert at.button(key="run").label == "运行"


def test_a_bad_file_uploaded_on_a_chinese_history_view_is_refused_in_chinese():
    # A schema's refusal: the field's path, its allowed values (core.history.allowed) and the file's name, in Chinese.
    bad = make_result(run_id="zh-bad").to_json().replace('"test_accuracy": 0.', '"test_accuracy": 7.', 1).encode()
    i18n.set_language("zh")
    try:
        at = page("History", session("zh"))
        at.file_uploader(key="history_upload").set_value(("bad.json", bad, "application/json")).run()
    finally:
        i18n.set_language("en")
    said = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # as shown: words.plain's Markdown escapes undone
    assert len(said) == 1 and said[0].startswith("bad.json") and CJK.search(said[0]), said
    assert english_left(said[0], set()) == [], said
    assert not at.exception and get_store().get("zh-bad") is None
