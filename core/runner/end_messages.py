"""What the runner says of a job that ended early, as marked templates: filled in English where it is said (the
runner's threads, the CLI), read back into a page's language where a page shows it (core.language.i18n.again)."""

from core.language.i18n import N_

KILLED = N_("The worker process (pid {pid}) was killed ({signal})")
KILLED_OOM = N_("The worker process (pid {pid}) was killed ({signal}, often the system running out of memory)")
EXITED = N_("The worker process (pid {pid}) exited (code {code})")  # a field ends no template: it reads back whole
SILENT = N_("The worker process (pid {pid}) stopped answering")
NODE_LOST = N_("The Ray node {name} was lost")
NODE_SILENT = N_("The Ray node {name} stopped answering")
NODE_SLOW = {
    "gpu": N_("The Ray node {name} did not start the job within {seconds} s (are {n} of its GPUs free?)."),
    "cpu": N_("The Ray node {name} did not start the job within {seconds} s (are {n} of its CPUs free?)."),
}
# How much was kept, as whole sentences per unit and count (English says "1 epoch", "3 epochs").
AFTER = {
    "epoch": (N_("{what} after epoch {n}; {n} epoch kept."), N_("{what} after epoch {n}; {n} epochs kept.")),
    "point": (N_("{what} after point {n}; {n} point kept."), N_("{what} after point {n}; {n} points kept.")),
}
BEFORE = {
    "epoch": N_("{what} before its first epoch; no epoch kept."),
    "point": N_("{what} before its first point; no point kept."),
}
ALL = (
    KILLED,
    KILLED_OOM,
    EXITED,
    SILENT,
    NODE_LOST,
    NODE_SILENT,
    *NODE_SLOW.values(),
    *(t for pair in AFTER.values() for t in pair),
    *BEFORE.values(),
)


def ended_early(what: str, unit: str, kept: int) -> str:
    """'{what} after epoch 3; 3 epochs kept.', in English: what happened, when, and how many items were kept."""
    unit = unit if unit in AFTER else "epoch"
    if not kept:
        return BEFORE[unit].format(what=what)
    return AFTER[unit][kept != 1].format(what=what, n=kept)
