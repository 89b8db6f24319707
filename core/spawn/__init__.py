"""Programs started from an interpreter that has imported TensorFlow once (Linux): a worker starts in milliseconds
instead of the ~7 CPU-seconds a fresh interpreter spends importing TensorFlow (the tests' CLI calls fork too).

zygote.py is the parent's side, forker.py the zygote's own, messages.py what they say.
"""
