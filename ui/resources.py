"""What every browser session shares, made once per server process: the runner, the store, the hardware check."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.cluster import messages
from core.engine import memory
from core.engine.kinds import JOB_KINDS
from core.history import store as history
from core.language import i18n
from core.machine import hardware_check
from core.runner import Runner, pool
from ui import access, priority, salvage


@st.cache_resource(show_spinner=False)
def get_store() -> history.Store:
    """The run history every page reads ($TFDASH_DB, read once); an unusable file raises StoreError here."""
    return history.get_store()


@st.cache_resource(show_spinner=False)
def get_runner() -> Runner:
    """The process-wide runner shared by every browser session; it records every job in the default store."""
    get_store()  # an unwritable history fails here, as a StoreError sentence, not silently mid-run
    # A comparison's runs each find a worker waiting; each worker exits after its job unless TFDASH_WORKER_JOBS says.
    runner = Runner(JOB_KINDS, warm=memory.warm_workers(), worker_jobs=pool.worker_jobs())
    history.attach(runner)  # each job goes to the default store as of its start ($TFDASH_DB is read then)
    return runner


@st.cache_resource(show_spinner=False)
def _hardware_check() -> Callable[[], hardware_check.Hardware]:
    # core.machine.hardware_check's process-wide check: a subprocess imports TensorFlow, so the page never does.
    hardware_check.start()
    return hardware_check.result


def hardware() -> hardware_check.Hardware:
    """The hardware check's answer so far (state CHECKING until the subprocess answers); started on first use."""
    return _hardware_check()()


def start() -> str | None:
    """Start what every page needs (the hardware check, the runner and its history); a sentence if it cannot."""
    if warning := hardware().cluster_warning:  # starts the GPU check in a subprocess; the page does not wait for it
        st.warning(
            i18n.again(warning, messages.ALL)
        )  # every page: a cluster used without token authentication runs anyone's code
    try:
        get_runner()  # opens the run history: an unusable file is one sentence, not a traceback
    except history.StoreError as err:
        _offer_salvage(str(err))
        return str(err)
    viewer = not access.allowed()
    priority.viewer_page(viewer)  # a viewer's page waits for the run, the presenter's does not
    priority.seen(access.session_id(), viewer)  # the room's size sets its viewers' cadence (priority.stretch)
    return None


def _offer_salvage(error: str) -> None:
    # Drawn before the entry's error sentence (streamlit_app.py shows the one start() returns), so it says
    # on its own what happened; only a damaged file gets it, not a locked, missing or read-only one.
    if not salvage.is_damaged(error):
        return
    try:
        path = history.default_db_path()
    except history.StoreError:
        return
    st.warning("The run history cannot be read: Salvage saves every run that can still be read into a new file.")
    salvage.salvage_ui(path, error)
