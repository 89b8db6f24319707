"""Processes started from an interpreter that has imported TensorFlow once (Linux): a worker, the hardware check and
the CLI start in milliseconds instead of the ~7 CPU-seconds a fresh interpreter spends importing TensorFlow.

zygote.py is the parent's side (`start` a program, `run` one to its end), forker.py the zygote's own, messages.py
what they say.
"""
