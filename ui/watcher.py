"""The page's jobs: one path to start, stop and watch them, and the page's one live fragment.

A kind of job is what one button submits: "train" (the runs one Run click queues) or "sweep". Per kind, session_state
holds a Watch: the ids the page shows, and whether the page started them (it may stop them) or only watches another
page's (shown, never stopped, replaced by its own Run). One fragment per page ticks while anything is queued or running
(or the hardware check is still out), and costs nothing between ticks. A tick reads the runner once (JobsNow) and
redraws only text from it (the queue line, the view's status line and progress bar), so they never disagree. When what
the view draws once changes (a job starts or ends, epochs or sweep points land) it reruns the page once instead: charts
and metrics are redrawn when a job starts or ends, at each round of runs taking turns and otherwise at most every
REDRAW_S while epochs land, not per tick, and History and the stored sweeps include a job as soon as it finishes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import streamlit as st

from core.language.i18n import N_, _
from core.machine import hardware_check
from core.results.states import State
from core.runner import JobStatus
from core.settings.config import SweepConfig, TrainConfig
from ui import access, live, priority, viewer_wait
from ui.redraw import REDRAW_S, Drawn, drawn, should_redraw
from ui.resources import get_runner, hardware

TICK_S = 0.7  # between live redraws while a job is active; Stop is honoured at the next tick
IDLE_TICK_S = 2.0  # shared (`make share`), an idle page still looks: a viewer sees the presenter's Run within 2 s
KINDS = {"train": TrainConfig, "sweep": SweepConfig}  # session_state key -> the config type it submits
MEMORY = "live_page"  # session_state key of the page's PageMemory
# Who stopped a run, as the runner records it (English, the record's words) and every page translates it.
BY_PRESENTER, BY_OTHER = N_("the presenter"), N_("another page")


@dataclass
class PageMemory:
    """What a page keeps between its runs about the jobs it drew (one session_state entry)."""

    active_drawn: set[str] = field(default_factory=set)  # active jobs it has drawn: one ending reruns the page
    drawn: tuple[Drawn, ...] | None = None  # the jobs the view drew in its last full run
    drawn_at: float = 0.0  # when (time.monotonic())
    stopped_here: set[str] = field(default_factory=set)  # their line says "stopped by this page"
    queue_slot: object = None  # the queue line's place, made by queue_ui in this run of the script
    stretch: float = 1.0  # its ticks and redraws this much less often: a viewer's page in a large room (priority)
    moment: int = -1  # the runner's moment() when its live text was last drawn (a viewer's tick holds until it moves)
    ticked: float = 0.0  # when (time.monotonic()): a viewer's next tick holds until its stretched interval from then
    inline: bool = False  # the fragment's next run is the one inside the whole page's run: it never holds


def memory() -> PageMemory:
    """This page's PageMemory."""
    if MEMORY not in st.session_state:
        st.session_state[MEMORY] = PageMemory()
    return st.session_state[MEMORY]


@dataclass
class Watch:
    """What a page shows of one kind of job."""

    ids: list[str]
    started_here: bool  # started by this page (it may stop them), or another page's, only watched
    stopping: bool = False


@dataclass(frozen=True)
class JobsNow:
    """One read of the runner: the queue, and the jobs the page shows, from the same moment."""

    queue: tuple[JobStatus, ...]  # running, then queued in order
    shown: dict[str, tuple[JobStatus, ...]]  # kind -> the jobs its Watch names
    watches: dict[str, Watch | None]
    ready: bool = True  # a job submitted now would start at once: its workers wait with TensorFlow imported

    @property
    def warming(self) -> bool:
        """Nothing queued, and the workers for the next job still starting: Run waits for them (then starts at once)."""
        return not self.queue and not self.ready

    @property
    def current(self) -> JobStatus | None:
        """The running job, if any."""
        return next((j for j in self.queue if j.state == State.RUNNING), None)

    @property
    def active(self) -> set[str]:
        """Ids of every queued or running job the page shows, the queue line's included."""
        shown = {s.run_id for jobs in self.shown.values() for s in jobs if s.state in live.ACTIVE}
        return shown | {j.run_id for j in self.queue}

    def progress(self) -> tuple[Drawn, ...]:
        """What the view draws once of each job it shows; a change reruns the page."""
        return tuple(drawn(s) for jobs in self.shown.values() for s in jobs)

    def started_here(self) -> set[str]:
        """Ids of the jobs this page started."""
        return {i for w in self.watches.values() if w is not None and w.started_here for i in w.ids}


# -- actions (button callbacks: they run before the script, so the click is seen by this run) ------
def start(kind: str, configs: list) -> None:
    """Queue `configs` as this page's `kind` group: shown from now on and stoppable here. Presenter only."""
    if not access.allowed():  # the button is disabled for a viewer, but a hostile page can still click it
        st.session_state.start_error = _(access.DENIED)
        return
    st.session_state[kind] = Watch(live.submit_group(get_runner(), configs), started_here=True)


def stop(kind: str) -> None:
    """Stop the `kind` jobs this page shows (within a second): its own or, watched, another page's. Presenter only.

    A presenter may stop another page's run: after a reload its own run is another page's, still on the projector.
    """
    watch = st.session_state.get(kind)
    if watch is None or not access.allowed():
        return
    by = BY_PRESENTER if os.environ.get(access.TOKEN_ENV) else BY_OTHER  # as the other pages word it
    for run_id in watch.ids:
        if get_runner().cancel(run_id, by=by):
            memory().stopped_here.add(run_id)
    watch.stopping = True


def stopped_by(jobs: Iterable[JobStatus]) -> str | None:
    """'this page', 'the presenter', 'another page': who stopped the first of `jobs` that somebody stopped."""
    here = memory().stopped_here
    for s in jobs:
        if s.state == State.CANCELLED and (s.run_id in here or s.stopped_by):
            return _("this page") if s.run_id in here else _(s.stopped_by)
    return None


def controls_ui(kind: str, snap: JobsNow, label: str, keys: tuple[str, str], on_run, ready: bool):
    """Run and Stop for this page's `kind` jobs; returns the column the live status line goes in.

    Only the page's own active jobs hold its Run back: watching another page's, it may queue its own. A viewer's Run and
    Stop are disabled, and their tooltips say why.
    """
    watch, jobs = snap.watches[kind], snap.shown[kind]
    active = watch is not None and live.is_active(jobs)
    own_active = active and watch.started_here
    may = access.allowed()
    warming = snap.warming  # pressed once they are up, a run starts at once, not after their start-up
    run_col, stop_col, status_col = st.columns([1, 1, 5], vertical_alignment="center")
    # No tooltip of its own while warming: the queue line says it (a presenter's pointer rests on Run after a run).
    run_col.button(
        label,
        key=keys[0],
        type="primary",
        on_click=on_run,
        disabled=own_active or not ready or not may or warming,
        width="stretch",
        help=access.help_text(_("Starting a run")),
    )
    stop_col.button(
        _("Stop"),
        key=keys[1],
        on_click=stop,
        args=(kind,),
        disabled=not (active and may),
        width="stretch",
        help=access.help_text(_("Stopping a run")),
    )
    # Keyed: the line keeps its height (ui.layout) whether its words take one line or two.
    return status_col.container(key=f"{kind}_status")


def status_view(kind: str, labels: Callable, prompt: str, status_col, snap: JobsNow) -> None:
    """The status line (in status_col) and progress bar of the page's `kind` jobs, from one snapshot.

    labels(jobs) names each job in the line; prompt is said while there are none. A draw for live_ui.
    """
    jobs, watch = snap.shown[kind], snap.watches[kind]
    if not jobs:
        status_col.markdown(
            prompt if access.allowed() else _("Nothing running; the presenter's runs appear here live.")
        )
        return
    line = live.status_line(jobs, labels(jobs), snap.current, watch.stopping)
    if not watch.started_here:
        said = _("Already running on this server: {line}") if live.is_active(jobs) else _("From another page: {line}")
        line = said.format(line=line)
    if who := stopped_by(jobs):
        line = _("{line} — stopped by {who}").format(line=line, who=who)
    status_col.markdown(f"**{line}**")
    text, fraction = live.download_line(jobs) or live.progress_bar(jobs)
    st.progress(fraction, text=text)


# -- reading --------------------------------------------------------------------------------
def _watch(kind: str, queue: tuple[JobStatus, ...]) -> Watch | None:
    """The page's Watch of `kind`: its own group (finished or not), else another page's active group, watched."""
    watch: Watch | None = st.session_state.get(kind)
    if watch is not None and watch.started_here:
        return watch  # shown until this page starts another; another page's run is only mentioned
    group = live.active_group(get_runner(), KINDS[kind], queue)
    if group and (watch is None or watch.ids != group):
        watch = st.session_state[kind] = Watch(group, started_here=False)
    return watch


def jobs_now(kinds: Iterable[str] = KINDS) -> JobsNow:
    """One read of the runner for the page: the queue, then the jobs each kind's Watch names."""
    runner = get_runner()
    queue = tuple(runner.jobs())
    by_id = {j.run_id: j for j in queue}
    watches, shown = {}, {}
    for kind in KINDS:
        watches[kind] = watch = _watch(kind, queue)
        # A job not in the queue has finished: its status no longer changes, so a later read agrees.
        jobs = tuple(s for i in (watch.ids if watch else ()) if (s := by_id.get(i) or runner.status(i)))
        if watch is not None and watch.stopping and not live.is_active(jobs):
            watch.stopping = False
        if kind in kinds:
            shown[kind] = jobs
    return JobsNow(queue, shown, watches, ready=not queue and runner.ready())


# -- the live fragment ------------------------------------------------------------------------
def queue_ui() -> None:
    """The page's role (said when it matters, with the presenter's End) and the queue line's place; the view's live
    fragment fills it."""
    access.role_ui()
    memory().queue_slot = st.empty()


def live_ui(snap: JobsNow, draw: Callable[[JobsNow], None] | None = None) -> None:
    """Draw the page's live text now and, while anything is active, again every TICK_S.

    snap: the view's own read (jobs_now()), from which it drew everything else: when a later tick's progress() differs,
    the page reruns, so nothing stays stale. draw(snapshot) draws the view's live text (a status line, a progress bar)
    at every tick; it may write into containers made before this call.
    """
    checking = hardware().state == hardware_check.CHECKING
    page = memory()
    page.active_drawn, page.drawn, page.drawn_at = snap.active, snap.progress(), time.monotonic()
    page.stretch = 1.0 if access.allowed() else priority.stretch()  # a large room: each viewer's page less often
    idle = IDLE_TICK_S if os.environ.get(access.TOKEN_ENV) else None  # `make run`: idle costs nothing
    warming = snap.warming
    every = TICK_S if snap.active or checking or warming else idle
    page.inline = True  # the browser asks every `every`; a viewer's tick holds to every * stretch (viewer_wait)
    st.fragment(_tick, run_every=every)(page.queue_slot, tuple(snap.shown), draw, checking, warming, every)


def _tick(
    slot,
    kinds: tuple[str, ...],
    draw: Callable[[JobsNow], None] | None,
    checking: bool,
    warming: bool,
    every: float | None = None,
) -> None:
    viewer, page = not access.allowed(), memory()
    priority.viewer_page(viewer)  # a viewer's tick waits for the run under measurement
    priority.seen(access.session_id(), viewer)
    if viewer and not page.inline and every:
        viewer_wait.hold(get_runner(), page.moment, page.ticked + every * page.stretch)
    page.inline, page.moment, page.ticked = False, get_runner().moment(), time.monotonic()
    snap = jobs_now(kinds)
    if viewer:
        snap = viewer_wait.past_a_stop(snap, lambda: jobs_now(kinds), get_runner(), page.moment)
    answered = checking and hardware().state != hardware_check.CHECKING
    warm = warming and snap.ready
    rerun = page.active_drawn - snap.active or answered or warm or _redraw(snap.progress())
    page.active_drawn = snap.active if rerun else page.active_drawn | snap.active  # a job queued since: its end reruns
    # The live text first, even when the whole page follows: a room of pages redrawn at a run's end takes seconds
    # (bench/room.py), and each says "stopped" at its tick, not when its turn comes.
    if slot is not None:
        slot.caption(live.queue_line(snap.queue, snap.started_here(), warming=snap.warming))
    if draw is not None:
        draw(snap)
    if rerun:
        # A job started or ended, epochs landed, the GPU check answered or Run may be pressed: the whole page once.
        st.rerun()


def _redraw(progress: tuple) -> bool:
    """Whether the view's charts are behind enough to draw the whole page again (should_redraw)."""
    page = memory()
    return should_redraw(progress, page.drawn, page.drawn_at, time.monotonic(), REDRAW_S * page.stretch)
