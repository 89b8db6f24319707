"""History's download for TensorBoard: the picked runs as a log directory in a .zip (core.cli.tensorboard writes it
in a process of its own, so the page never imports TensorFlow), made on a click and then offered."""

from __future__ import annotations

import streamlit as st

from core.cli.tensorboard import logdir_zip
from core.history.store import Store, StoreError
from core.language.i18n import _, ngettext
from ui import access

KEY = "tensorboard_log"  # session state: (the run ids it holds, the .zip)


def tensorboard_ui(column, store: Store, ids: list[str]) -> None:
    """A button that writes the runs' log (presenter only: it starts a TensorFlow process), then its download."""
    n = len(ids)
    made = st.session_state.get(KEY)
    if made and made[0] == tuple(ids):
        label = ngettext("Download run · for TensorBoard", "Download {n} runs · for TensorBoard", n).format(n=n)
        column.download_button(
            label,
            made[1],
            "tensorboard-logs.zip",
            "application/zip",
            key="history_tensorboard",
            on_click="ignore",
            help=_("Unzip it, then open it with: tensorboard --logdir tensorboard-logs"),
        )
        return
    wanted = column.button(
        _("Make a TensorBoard log…"),
        key="history_tensorboard_make",
        disabled=not access.allowed(),
        help=access.help_text(_("Writing a TensorBoard log"))
        or _("Scalars per epoch and per call, HParams and profile traces, as tensorboard --logdir opens them."),
    )
    if not wanted:
        return
    try:
        with st.spinner(_("Writing the TensorBoard log (TensorFlow starts in a process of its own)…")):
            st.session_state[KEY] = (tuple(ids), logdir_zip(store.path, ids))
    except StoreError as err:
        st.error(str(err))
        return
    st.rerun()
