"""Imported by a zygote in tests/test_zygote.py: a thread of its own, as an import that starts a pool does."""

import threading

threading.Thread(target=threading.Event().wait, name="a-pool", daemon=True).start()
