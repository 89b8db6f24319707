"""The page's catalogs: every msgid the code marks has a Chinese msgstr with the same placeholders, and compiles;
the language is per thread, and a thread that never chose one (the CLI, the runner) speaks English."""

from __future__ import annotations

import ast
import io
import string
import threading

from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from core.language import i18n, progress
from tests.conftest import ROOT


def marked() -> set[str]:
    """Every msgid `make catalogs` extracts (babel.cfg): _(), ngettext()'s singular and plural, N_()."""
    method_map, options_map = parse_mapping_cfg((ROOT / "babel.cfg").open())
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(ROOT, method_map, options_map):
        found |= set(message) if isinstance(message, tuple) else {message}
    return found - {""}


def fields(text: str) -> list[tuple[str, str]]:
    """The {name:spec} placeholders of a str.format sentence, sorted."""
    return sorted((name, spec or "") for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


def test_every_marked_sentence_has_a_chinese_translation_with_the_same_placeholders_and_it_compiles():
    with i18n.catalog_path("zh").open("rb") as po:
        catalog = read_po(po, locale="zh_CN")
    translated = {}
    for m in catalog:
        if not m.id:
            continue
        ids, strs = (m.id, m.string) if isinstance(m.id, tuple) else ((m.id,), (m.string,))
        assert all(strs), f"no msgstr for {ids[0]!r}"
        assert "fuzzy" not in m.flags, f"{ids[0]!r} is fuzzy: check its translation"
        translated |= dict.fromkeys(ids, strs[0])
        # Chinese has one plural form, said for every count: it has the plural's placeholders (the English singular
        # may leave the count out: 'Download run').
        for said in strs:
            assert fields(said) == fields(ids[-1]), f"placeholders differ: {ids[-1]!r} -> {said!r}"
            assert set(fields(ids[0])) <= set(fields(said)), f"placeholders differ: {ids[0]!r} -> {said!r}"
    missing = sorted(marked() - translated.keys())
    assert missing == [], f"{len(missing)} msgids not in the catalog (make catalogs, then translate): {missing[:5]}"
    assert list(catalog.check()) == []  # Babel's own checks (python-format, plural forms)
    write_mo(io.BytesIO(), catalog)  # compiles
    assert i18n.compile_catalog("zh").gettext("Run") == translated["Run"]


def test_the_language_is_per_thread_and_a_thread_that_chose_none_speaks_english():
    heard = {}

    def cli():
        heard["cli"] = progress.state_words("cancelled", "epoch", 3, 10)

    i18n.set_language("zh")
    try:
        thread = threading.Thread(target=cli)
        thread.start()
        thread.join()
        heard["page"] = progress.state_words("cancelled", "epoch", 3, 10)
        assert i18n.ngettext("{n} epoch", "{n} epochs", 1) == i18n.ngettext("{n} epoch", "{n} epochs", 2)  # one form
    finally:
        i18n.set_language("en")
    assert heard["cli"] == "stopped after 3 of 10 epochs"  # byte for byte the English the CLI always said
    assert heard["page"] == "3/10 轮后停止"
    assert progress.plural("epoch", 1) == "1 epoch" and progress.plural("epoch", 2) == "2 epochs"
    i18n.set_language("fr")  # a language without a catalog: English
    assert i18n.language() == "en" and i18n._("Run") == "Run"


def test_no_function_that_translates_assigns_the_name_gettext_uses():
    # `_`, assigned anywhere in a function (a, _ = ...; for _ in ...), is local to all of it: `_()` there then fails.
    found = []
    for path in [*(ROOT / "core").rglob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "streamlit_app.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(isinstance(n, ast.ImportFrom) and any(a.name == "_" for a in n.names) for n in ast.walk(tree)):
            continue
        for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.Lambda)):
            found += [f"{path.relative_to(ROOT)}:{n.lineno}" for n in _own_names(function) if n.id == "_"]
    assert found == []


def _own_names(node: ast.AST):
    """Names stored in `node`'s own scope (not in a nested function, class or comprehension)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.Lambda | ast.ClassDef | ast.comprehension):
            continue
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            yield child
        yield from _own_names(child)


def test_a_failed_hardware_checks_english_sentence_is_said_in_chinese():
    from core.machine import hardware_check
    from ui import compared

    said = hardware_check._run_check(
        ["/nonexistent/python"], 5
    ).message  # the check's own sentence, in its own thread's English
    i18n.set_language("zh")
    try:
        assert compared.check_failed(said) == "硬件检测无法启动（No such file or directory），GPU 已停用。"
        assert compared.check_failed("Another sentence.") == "Another sentence."  # another wording: as it is
    finally:
        i18n.set_language("en")
    assert compared.check_failed(said) == said


def test_every_schema_description_is_read_into_a_marked_phrase():
    # A field's refusal ends in its description: one no shape of core.history.allowed reads would stay English.
    from core.history.allowed import read
    from core.history.schemas import SCHEMAS

    def descriptions(node) -> list[str]:
        if isinstance(node, list):
            return [d for item in node for d in descriptions(item)]
        if not isinstance(node, dict):
            return []
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for value in node.values() for d in descriptions(value)]

    found = set(descriptions(SCHEMAS))
    literal = {d for d in found if d.isdigit() or d == '"sweep"'}  # a file's own values, said as they are
    assert len(found) > 30 and {d for d in found - literal if read(d) is None} == set()
    i18n.set_language("zh")
    try:
        assert read("a number from 0 to 1e+13 or null") == "从 0 到 1e+13 的数，或 null"
    finally:
        i18n.set_language("en")


def test_a_sentence_filled_in_english_by_the_cluster_check_reads_back_into_the_pages_language():
    from core.cluster import messages

    i18n.set_language("zh")
    try:
        for template in messages.ALL:
            values = {name: f"v{i}" for i, (name, _spec) in enumerate(fields(template))}
            english = template.format(**values)
            assert i18n.again(english, messages.ALL) == i18n._(template).format(**values), template
        # A sentence built from another (the cluster's refusal, then what the page offers instead), both read back.
        inner = messages.NONE_NAMED.format(env="TFDASH_RAY_ADDRESS", forms=messages.FORMS)
        outer = i18n.again(messages.ONLY_HERE.format(problem=inner), messages.ALL)
        assert outer == i18n._(messages.ONLY_HERE).format(
            problem=i18n._(messages.NONE_NAMED).format(env="TFDASH_RAY_ADDRESS", forms=i18n._(messages.FORMS))
        )
        assert i18n.again("Something no template says.", messages.ALL) == "Something no template says."
    finally:
        i18n.set_language("en")
    assert i18n.again(inner, messages.ALL) == inner  # English stays as it was said


def test_what_the_recorder_says_of_a_locked_history_on_the_runners_thread_reads_back_in_chinese(tmp_path, monkeypatch):
    import sqlite3

    from core.history import paths, recorder
    from core.history.store import Store
    from core.runner import end_messages
    from tests.sample_runs import make_result
    from tests.test_i18n_app import english_left

    monkeypatch.setenv(paths.LOCK_ENV, "0.2")
    store = Store(tmp_path / "runs.sqlite3")
    run = make_result(run_id="5f0e1d2c3b4a")
    record = recorder.Recorder(store, run.run_id, run.config)
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program holds the file: every write waits 0.2 s, then is refused
    notes = [record.start()] + [record.epoch(m, run) for m in run.epochs[:2]]
    holder.execute("ROLLBACK")
    assert notes[0].endswith("the run will be written when the history takes it.") and "epoch 1 will" in notes[1]
    assert "epochs 1-2 will" in notes[2] and "database is locked" in notes[2]
    i18n.set_language("zh")
    try:
        said = [i18n.again(note, recorder.SAID) for note in notes]
        killed = end_messages.ended_early(end_messages.EXITED.format(pid=41, code=1), "point", 0)
        said.append(i18n.again(killed, end_messages.ALL))
    finally:
        i18n.set_language("en")
    assert [english_left(s, {str(store.path)}) for s in said] == [[]] * 4, said
    assert "1-2" in said[2] and "0.2 秒" in said[2] and "41" in said[3]
