"""What `make run` and `make share` serve: the dashboard (streamlit_app.py) behind the server's own checks.

    streamlit run app.py

Streamlit finds the st.App below and serves streamlit_app.py through it, with ui/guard.py's middleware in front:
Host names outside server.allowedHosts refused, uploads only from the presenter's page, and the presenter's token
turned into a signed HttpOnly cookie; and the server's page threads below the training (ui/priority.py).
`streamlit run streamlit_app.py` still serves the page, without those.
"""

import streamlit as st
from starlette.middleware import Middleware

from ui import priority
from ui.guard import Guard

priority.ENABLED = True  # a real server: its page threads run below the training (ui/priority.py)
app = st.App("streamlit_app.py", middleware=[Middleware(Guard)])
