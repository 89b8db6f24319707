"""The page's catalogs: every msgid the code marks has a Chinese msgstr with the same placeholders, and compiles;
the language is per thread, and a thread that never chose one (the CLI, the runner) speaks English."""

from __future__ import annotations

import io
import string
import threading

from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from core import i18n, progress
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
        for msgid in ids:
            translated[msgid] = strs[0]
            assert fields(strs[0]) == fields(msgid), f"placeholders differ: {msgid!r} -> {strs[0]!r}"
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
