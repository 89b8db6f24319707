"""The Devices view: this machine's CPU, TensorFlow build and GPUs, and where the page's last runs' variables lived.

Run by st.navigation as a page (the guard at the bottom).
"""

from __future__ import annotations

import streamlit as st

from core import probe
from ui import charts, watcher
from ui.resources import hardware


def devices_ui(hw: probe.Probe, snap: watcher.Snapshot) -> None:
    """The hardware check's answer as a table, or why there is none yet."""
    if hw.state == probe.CHECKING:
        st.info("Checking for GPUs… (a subprocess imports TensorFlow; the page does not wait for it)")
        return
    if hw.state == probe.FAILED:
        st.warning(f"{hw.message} Treating this machine as CPU only.")
        return
    rows = probe.host_rows(hw)
    runs = snap.shown["train"]
    for s, label in zip(runs, charts.series_labels([s.config for s in runs]), strict=True):
        if s.result and s.result.device.get("variables_on"):
            rows.append((f"Last run, {label}", f"variables lived on {s.result.device['variables_on']}"))
    st.markdown("| | This machine |\n|---|---|\n" + "\n".join(f"| **{k}** | {v} |" for k, v in rows))


def main() -> None:
    snap = watcher.take(["train"])
    devices_ui(hardware(), snap)
    watcher.live_ui(snap)  # the queue line; a finished run reruns the page, adding its row


if __name__ == "__main__":  # st.navigation runs this file as the Devices page
    main()
