"""The page's few style rules for a 1280x720 projector, drawn by every view (a view's elements go when it changes).

- Less empty space above the content, so the Run row, the status line and both charts fit on one screen.
- Streamlit's header "Stop" hidden: it stops only the script, so the page froze at "2 of 30 epochs" while
  training went on. The Stop next to Run stops the run itself. The "running" indicator stays.
- Buttons (downloads) and code wrap their text instead of cutting it.
- Charts side by side stack one under the other when the main area is narrower than 720 px (1024x768 with
  the sidebar open): at half of that, Vega cut their titles, legends and axis labels at the chart's edge.
- The uploader's own drop-zone small print hidden: the label states the limit (the importer's, which the
  server's maxUploadSize matches) and what the files are.
"""

from __future__ import annotations

import streamlit as st

CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.8rem; padding-bottom: 2rem; }
[data-testid="stStatusWidget"] button { display: none; }
[data-testid="stBaseButton-secondary"] p, [data-testid="stDownloadButton"] p { white-space: normal; }
[data-testid="stCode"] code { white-space: pre-wrap; overflow-wrap: anywhere; }
[data-testid="stFileUploaderDropzoneInstructions"] { display: none; }
[data-testid="stMainBlockContainer"] { container-type: inline-size; }
@container (max-width: 720px) {
  [data-testid="stHorizontalBlock"]:has([data-testid="stVegaLiteChart"]) { flex-wrap: wrap; }
  [data-testid="stHorizontalBlock"]:has([data-testid="stVegaLiteChart"]) > [data-testid="stColumn"] {
    flex: 1 1 100%; min-width: 100%;
  }
}
</style>
"""


def style() -> None:
    """The style rules, as an element that takes no space."""
    st.html(CSS)
