"""What the page and the CLI derive from stored results, on read: the speed comparison and its interval
(compare), the roofline, why a step takes its time (why and its sentences) and what changed between two runs
(changes). Above core.results; the engine and the history import none of it (pyproject's import-linter contracts).
"""
