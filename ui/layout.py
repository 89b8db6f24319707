"""The page's few style rules for a 1280x720 projector, drawn by every view (a view's elements go when it changes).

- Less empty space above the content and between elements, so the status line, the headline and both charts
  fit on one screen at 1280x720 with the sidebar open, during a run and after it.
- The two live charts are as tall as the window leaves them (fill(): Vega fits each chart to its element, which
  this sizes from the window's height), so they grow at 1080p; not in a chart's full-screen view (the page is
  then locked from scrolling), which fills the screen.
- The status line and the headline keep their height when their words change (a run ending, the headline
  arriving), so nothing below them moves; the headline's place holds two lines of its font (the speedup's sentence
  with its spread and count, at 1280x720 with the sidebar open) and the line under it: what the range covers, or
  that the machine was busy.
- Streamlit's header "Stop" hidden: it stops only the script, so the page froze at "2 of 30 epochs" while
  training went on. The Stop next to Run stops the run itself. The "running" indicator stays.
- Buttons (downloads) and code wrap their text instead of cutting it.
- Charts side by side stack one under the other when the main area is narrower than 720 px (1024x768 with
  the sidebar open): at half of that, Vega cut their titles, legends and axis labels at the chart's edge.
- The uploader's own drop-zone small print hidden, and its English words drawn over in the page's language: the label
states the limit (the importer's, which the
  server's maxUploadSize matches) and what the files are.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from core.language import i18n
from core.language.i18n import _

CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.8rem; padding-bottom: 2rem; }
[data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.45rem; }
body:not([style*="overflow: hidden"]) .st-key-run_charts [data-testid="stVegaLiteChart"] {
  height: clamp(260px, calc(100vh - 390px), 640px) !important;
}
.st-key-headline:has(h4) { min-height: 5.2rem; justify-content: center; }
.st-key-headline h4 { padding: 0; font-size: 1.2rem; line-height: 1.25; }
.st-key-headline [data-testid="stMarkdownContainer"]:has(h4) { margin-bottom: 0; }
.st-key-train_status, .st-key-sweep_status { min-height: 3.25rem; justify-content: center; }
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


# Streamlit's uploader button says Upload in English only: in another language the page draws its word over it
# (its "Drag and drop files here", shown only while a file is dragged over it, stays English).
UPLOADER_WORDS = """
<style>
[data-testid="stFileUploaderDropzone"] button p { font-size: 0; }
[data-testid="stFileUploaderDropzone"] button p::after { content: "%(upload)s"; font-size: 0.875rem; }
</style>
"""


def style() -> None:
    """The style rules, as an element that takes no space."""
    st.html(CSS)
    if i18n.language() != i18n.ENGLISH:
        said = {"upload": _("Upload")}
        st.html(UPLOADER_WORDS % {k: v.replace("\\", "").replace('"', "") for k, v in said.items()})


def fill(chart):
    """A live chart as tall as its element (the CSS above sizes that from the window), legend and titles inside."""
    # Vega's fit overshoots the top by a few pixels while a run redraws (the title "Seconds per epoch" was cut at
    # 1280x720, artifacts/layout-720p-running.png): a wider top padding keeps the title inside its element.
    return chart.properties(
        height="container",
        autosize=alt.AutoSizeParams(type="fit", contains="padding"),
        padding={"top": 14, "left": 5, "right": 5, "bottom": 5},
    )
