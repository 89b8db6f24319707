"""The Devices view: this machine's CPU, TensorFlow build and GPUs, where the page's last runs' variables lived,
and each node of a Ray cluster (TFDASH_RAY_ADDRESS).

Run by st.navigation as a page (the guard at the bottom).
"""

from __future__ import annotations

import streamlit as st

from core.cli.devices import limits_words
from core.cluster import connect, messages
from core.language import i18n
from core.language.i18n import N_, _
from core.machine import hardware_check
from ui import access, compared, layout, roofline, run_text, watcher
from ui.labels import series_labels
from ui.resources import hardware


def devices_ui(hw: hardware_check.Hardware, snap: watcher.JobsNow) -> None:
    """The hardware check's answer as a table, or why there is none yet."""
    if hw.state == hardware_check.CHECKING:
        st.info(_("Checking for GPUs… (a subprocess imports TensorFlow; the page does not wait for it)"))
        return
    if hw.state == hardware_check.FAILED:
        st.warning(_("{problem} Treating this machine as CPU only.").format(problem=compared.check_failed(hw.message)))
        return
    rows = [(k, v) for k, v in hardware_check.host_rows(hw) if k != "Built with"]
    rows.insert(2, build_row(hw))
    # Measured by the same check, before any run: the figures every run this server starts uses.
    for tf_device, measured in (hw.host.get("limits") or {}).items():
        rows.append((_("Limits, {device}").format(device=tf_device.strip("/")), limits_words(measured)))
    runs = snap.shown["train"]
    for s, label in zip(runs, series_labels([s.config for s in runs]), strict=True):
        if s.result and s.result.device.get("variables_on"):
            lived = _("variables lived on {device}").format(device=s.result.device["variables_on"])
            rows.append((_("Last run, {label}").format(label=label), lived))
            rows.append((_("Limits used, {label}").format(label=label), roofline.limits_text(s.result)))
    head = _("| | This machine |")
    st.markdown(head + "\n|---|---|\n" + "\n".join(f"| **{_(k)}** | {v} |" for k, v in rows))
    if not hw.gpus and not hw.nodes:
        st.caption(_(NO_GPU_HERE))
    if hw.cluster:
        cluster_ui(hw)


def cluster_ui(hw: hardware_check.Hardware) -> None:
    """Each node of the Ray cluster, as the node lists itself; a device there is NODE/cpu, NODE/gpu:0."""
    st.subheader(_("Ray cluster"))
    sentence = i18n.again(hw.cluster, messages.ALL)  # said by the cluster check's thread, in English
    if access.allowed():  # the cluster's address, and Ray's dashboard there, are the presenter's to see
        link = connect.dashboard_url()
        st.caption(
            run_text.plain(sentence + (" " + _("Ray's own dashboard: {link}").format(link=link) if link else ""))
        )
    else:
        st.caption(run_text.plain(redacted(sentence, hw.cluster_address)))
    for node in hw.nodes:
        if node.get("message"):
            st.warning(run_text.plain(i18n.again(node["message"], messages.ALL)))
            continue
        host = node["host"]
        title = f"{node['name']} · {run_text.plain(str(host.get('hostname') or '?'))}"
        rows = [
            (
                _("Devices"),
                f"`{node['name']}/cpu`"
                + "".join(f", `{node['name']}/gpu:{g['index']}`" for g in host.get("gpus") or []),
            )
        ]
        rows += [
            (k, run_text.plain(str(v)))
            for k, v in hardware_check.host_rows(hardware_check.Hardware(hardware_check.READY, host=host))
        ]
        st.markdown(f"| | {title} |\n|---|---|\n" + "\n".join(f"| **{k}** | {v} |" for k, v in rows))


def redacted(sentence: str, address: str) -> str:
    """A sentence about the cluster without its address (host, port, ray://): for a viewer's page."""
    parts = [address, address.removeprefix("ray://")]
    host = address.removeprefix("ray://").rpartition(":")[0].strip("[]")
    for part in sorted({p for p in (*parts, host) if p and p != "auto"}, key=len, reverse=True):
        sentence = sentence.replace(part, _("(the presenter's)"))
    return sentence


NO_GPU_HERE = N_(
    "No GPU here? Train on a GPU server with `python -m core train --device gpu --json run.json` and import "
    "that file in the History view: its host and device stay with it, next to this machine's runs."
)


def build_row(hw: hardware_check.Hardware) -> tuple[str, str]:
    """What the TensorFlow build supports, worded so that 'built for CUDA' never reads as 'has a GPU'."""
    cuda, cudnn = hw.host.get("cuda_build"), hw.host.get("cudnn_build")
    if not cuda:
        return N_("GPU support"), _("none: this TensorFlow is a CPU-only build")
    built = f"CUDA {cuda}" + (f", cuDNN {cudnn}" if cudnn else "")
    if hw.gpus:
        return N_("GPU support"), _("this TensorFlow was built for {built}").format(built=built)
    said = _("this TensorFlow could use an NVIDIA GPU (built for {built}), but none is found below")
    return N_("GPU support"), said.format(built=built)


def main() -> None:
    layout.style()
    snap = watcher.jobs_now(["train"])
    devices_ui(hardware(), snap)
    watcher.live_ui(snap)  # the queue line; a finished run reruns the page, adding its row


if __name__ == "__main__":  # st.navigation runs this file as the Devices page
    main()
