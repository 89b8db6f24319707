"""The page's Salvage: a history that cannot be read is copied, every readable run of it, into a new file beside it.

Offered wherever a read of the history fails because the file is damaged (when the dashboard starts, in the
History view). The damaged file is opened read-only and left as it is; the new file is named after it with the
time, so nothing already stored is overwritten. Presenter only, like every change.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from core.history.paths import DAMAGED_WORDS as DAMAGED  # SQLite's words for a damaged file
from core.history.salvage import salvage as salvage_into
from core.history.store import StoreError
from core.language.i18n import _
from ui import access

NOTE = "salvage_note"  # session_state: (level, sentence) of the last salvage


def is_damaged(sentence: str) -> bool:
    """Whether a history error says the file is damaged (so salvage may help), not locked, missing or read-only."""
    return any(word in sentence for word in DAMAGED)


def target(path: Path) -> Path:
    """The new file beside `path`: runs-salvaged-20250101-120000.sqlite3."""
    return path.with_name(f"{path.stem}-salvaged-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")


def salvage(path: str) -> None:
    """Button callback: salvage `path` into target(path); the sentence (counts, or why not) is shown next."""
    if not access.allowed():  # checked here too: a disabled button is only the browser's word
        st.session_state[NOTE] = ("error", _(access.DENIED))
        return
    new = target(Path(path))
    try:
        sentence = salvage_into(path, new)
    except (StoreError, OSError) as err:
        st.session_state[NOTE] = ("error", str(err))
        return
    said = _("To use it, restart the dashboard with TFDASH_DB={path}.").format(path=new)
    st.session_state[NOTE] = ("success", f"{sentence} {said}")


def salvage_ui(path: str | Path, error: str) -> None:
    """The Salvage button under a damaged history's error sentence, and what the last salvage kept."""
    if note := st.session_state.pop(NOTE, None):
        (st.success if note[0] == "success" else st.error)(note[1])
    if not is_damaged(error):
        return
    st.button(
        _("Salvage: copy every readable run into a new file"),
        key="salvage",
        on_click=salvage,
        args=(str(path),),
        disabled=not access.allowed(),
        help=access.help_text(_("Salvaging the history")),
    )
    said = _("The damaged {name} stays as it is; the copy goes beside it, in {folder}.")
    st.caption(said.format(name=Path(path).name, folder=Path(path).parent))
