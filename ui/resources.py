"""What every browser session shares, made once per server process: the runner (with the store attached)."""

from __future__ import annotations

import streamlit as st

from core.engine.kinds import JOB_KINDS
from core.history.store import attach, get_store
from core.runner import Runner


@st.cache_resource(show_spinner=False)
def get_runner() -> Runner:
    """The process-wide runner shared by every browser session; it records every job in the default store."""
    get_store()  # an unwritable history fails here, as a StoreError sentence, not silently mid-run
    runner = Runner(JOB_KINDS)
    attach(runner)  # each job goes to the default store as of its start ($TFDASH_DB is read then)
    return runner
