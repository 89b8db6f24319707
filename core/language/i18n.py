"""The page's language: gettext catalogs (locale/<lang>/LC_MESSAGES/tfdash.po), one language per thread.

Streamlit runs each browser session's script in a thread of its own (a new one for most reruns, its callbacks and
live ticks included), so the page registers a resolver (ui.lang) that says the language of the session whose script
the calling thread runs; a thread that runs no page's script, and one that never set a language (the CLI, the runner,
a worker), speaks English, the catalogs' msgids. set_language() sets a thread's own (a test's, the CLI never does).
A catalog is compiled from its .po with Babel when first asked for, in memory, so the words shown are always those
committed (no stale .mo).
"""

from __future__ import annotations

import functools
import gettext
import io
import re
import threading
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from pathlib import Path

DOMAIN = "tfdash"
LOCALE_DIR = Path(__file__).resolve().parents[2] / "locale"
ENGLISH = "en"
# A page's language code -> its catalog's locale (locale/<locale>/LC_MESSAGES/tfdash.po); English is the msgids.
LANGUAGES = {"en": "en", "zh": "zh_CN"}

_current: ContextVar[str | None] = ContextVar("language", default=None)
_resolver: Callable[[], str | None] | None = None  # the page's: the language of the session this thread runs
_catalogs: dict[str, gettext.NullTranslations] = {}
_lock = threading.Lock()


def set_language(code: str) -> None:
    """Speak `code` (a key of LANGUAGES; anything else: English) in this thread from now on."""
    _current.set(code if code in LANGUAGES else ENGLISH)


def set_resolver(resolver: Callable[[], str | None] | None) -> None:
    """Where a thread that runs a page's script finds its language (None: not such a thread); ui.lang sets it."""
    global _resolver
    _resolver = resolver


def language() -> str:
    """The language this thread speaks: its page session's, else the one it set, else English (a key of LANGUAGES)."""
    code = _resolver() if _resolver is not None else None
    code = code or _current.get()
    return code if code in LANGUAGES else ENGLISH


def catalog_path(code: str) -> Path:
    """Where the .po file of `code` lives."""
    return LOCALE_DIR / LANGUAGES[code] / "LC_MESSAGES" / f"{DOMAIN}.po"


def compile_catalog(code: str) -> gettext.NullTranslations:
    """The .po file of `code` compiled (Babel) into gettext's translations; none there: English (fallback)."""
    path = catalog_path(code)
    if code == ENGLISH or not path.exists():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo  # only a page that speaks another language needs Babel
    from babel.messages.pofile import read_po

    with path.open("rb") as po:
        catalog = read_po(po, locale=LANGUAGES[code])
    mo = io.BytesIO()
    write_mo(mo, catalog, use_fuzzy=False)
    mo.seek(0)
    return gettext.GNUTranslations(mo)


def translations(code: str | None = None) -> gettext.NullTranslations:
    """The translations of `code` (default: this thread's language), compiled once per process."""
    code = code or language()
    if (found := _catalogs.get(code)) is None:
        with _lock:
            found = _catalogs.setdefault(code, compile_catalog(code))
    return found


def _(message: str) -> str:
    """`message` in this thread's language."""
    return translations().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a sentence about `n` things, in this thread's language (Chinese has one form)."""
    return translations().ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks `message` for the catalogs where it is defined (a table of labels); `_()` translates it where shown."""
    return message


def again(message: str, templates: Iterable[str]) -> str:
    """A sentence filled in English by a thread that speaks no page's language (the hardware check's, the cluster's),
    in this thread's: read back against the marked templates it was filled from, its values too; else unchanged."""
    if language() == ENGLISH:
        return message
    return _read(message, tuple(templates))[0]


def _read(message: str, templates: tuple[str, ...]) -> tuple[str, int]:
    """(message in this thread's language, how many of its characters the templates' own words account for): of the
    readings that fit, the one whose templates, values read again, account for the most ('{a} Only ...' of '{b}.')."""
    if message in templates:
        return _(message), len(message)
    best = (message, 0)
    for template in templates:
        if "{" not in template or not (found := _pattern(template).fullmatch(message)):
            continue
        values = {name: _read(value, templates) for name, value in found.groupdict().items()}
        own = len(_FIELD.sub("", template)) + sum(n for _said, n in values.values())
        if own > best[1]:
            # A value was read as its text ('5 s' of '{timeout:g} s'): filled again as text, without its format.
            text = _FIELD.sub(lambda m: "{" + m[1] + "}", _(template))
            best = text.format(**{name: said for name, (said, _n) in values.items()}), own
    return best


_FIELD = re.compile(r"\{(\w+)(?:![rsa])?(?::[^}]*)?\}")  # a field, with its format if any: {n}, {timeout:g}


@functools.lru_cache(maxsize=1024)
def _pattern(template: str) -> re.Pattern:
    """The template as a pattern: each field matches any text, a field named twice the same text both times."""
    parts, named = [], set()
    for i, piece in enumerate(_FIELD.split(template)):
        if i % 2 == 0:
            parts.append(re.escape(piece))
        else:
            parts.append(f"(?P={piece})" if piece in named else f"(?P<{piece}>.+?)")
            named.add(piece)
    return re.compile("".join(parts), flags=re.DOTALL)
