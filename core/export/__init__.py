"""What leaves the dashboard to be run or read elsewhere: a script that reproduces a run (snippet) and the runs as a
TensorBoard log directory (tensorboard)."""
