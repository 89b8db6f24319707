"""The dashboard: pick a device and settings, then watch CPU and GPU train live, side by side.

This entry wires the page: its config, the shared resources (ui.resources), the queue line and the
four views, each a module under ui/ that st.navigation runs as a page, so only the view on screen
does any work. No TensorFlow here or in ui/: training and sweeps run in core.runner's worker
process, the hardware check in a subprocess, so the first render never waits for TensorFlow.
"""

from __future__ import annotations

import streamlit as st

from ui import compared, lang, resources, watcher
from ui.lang import N_, _

# (page file, title, icon): the views in the order the navigation bar shows them, Train first.
VIEWS = (
    ("ui/train.py", N_("Train"), ":material/play_circle:"),
    ("ui/history.py", N_("History"), ":material/history:"),
    ("ui/scaling.py", N_("Scaling"), ":material/stacked_line_chart:"),
    ("ui/devices.py", N_("Devices"), ":material/memory:"),
)


def main() -> None:
    code = lang.apply()  # before any words: every sentence below is in the page's language
    st.set_page_config(page_title="TensorFlow training, live", page_icon="⏱️", layout="wide")
    if problem := resources.start():
        st.error(problem)
        return
    pages = [st.Page(path, title=_(title), icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(VIEWS)]
    page = st.navigation(pages, position="top")
    compared.title_slot()  # the title follows what the view compares (Train's runs); the view fills it
    watcher.queue_ui()
    page.run()
    compared.default_title_ui(page.url_path)
    lang.switch_ui(code, None if page is pages[0] else st.container())  # Train's sidebar, else under the view


main()
