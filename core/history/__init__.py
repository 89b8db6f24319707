"""The run history: one Store (SQLite) for runs and sweeps, rows and CSV, and the checked import of result files."""
