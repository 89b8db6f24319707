"""Running jobs: one at a time, each in a worker process of its own (or on a Ray node), a comparison's taking turns.

runner.py is the queue the page and the benches use; worker.py the process a job runs in; turns.py a comparison's
runs taking turns; pool.py the workers waiting for the next job; remote.py a job on a Ray node; jobs.py a job as
the runner holds it and as the page reads it.
"""

from core.runner.jobs import Job, JobStatus
from core.runner.runner import JobKind, Listener, Runner

__all__ = ["Job", "JobKind", "JobStatus", "Listener", "Runner"]
