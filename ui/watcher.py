"""The page's jobs: one path to start, stop and watch them, and the page's one live fragment.

A kind of job is what one button submits: "train" (the runs one Run click queues) or "sweep". Per
kind, session_state holds a Watch: the ids the page shows, and whether the page started them (its
own: it may stop them) or only watches another page's (shown, never stopped, replaced by its own
Run). One fragment per page ticks while anything is queued or running (or the hardware check is
still out), and costs nothing between ticks. A tick takes one Snapshot and redraws only text from
it (the queue line, the view's status line and progress bar), so they never disagree. When what the
view draws once changes (a job starts or ends, epochs or sweep points land) it reruns the page once
instead: charts and metrics are redrawn when a job starts or ends, at each round of runs taking turns
and otherwise at most every REDRAW_S while epochs land, not per tick, and History and the stored
sweeps include a job as soon as it finishes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass

import streamlit as st

from core import probe
from core.config import SweepConfig, TrainConfig
from core.i18n import N_, _
from core.runner import JobStatus
from ui import access, live, priority
from ui.resources import get_runner, hardware

TICK_S = 0.7  # between live redraws while a job is active; Stop is honoured at the next tick
# While runs train, the charts are redrawn at most this often: a whole-page rerun costs the server (and the
# browser, which draws the charts again) CPU that a CPU run under measurement shares. Redrawn at every epoch
# (about twice a second in the Quick demo), the page took about 0.6 of a core on the 2-core VM and made plain
# fit's steps 35-40% slower than with no page watching (bench/headline_in_page.py). A job starting or
# ending redraws at once, and so does each round of runs taking turns (every run one more epoch, so the
# charts show them at the same epoch); within a long epoch, every REDRAW_S seconds of training moves the race.
REDRAW_S = 3.0
IDLE_TICK_S = 2.0  # shared (`make share`), an idle page still looks: a viewer sees the presenter's Run within 2 s
KINDS = {"train": TrainConfig, "sweep": SweepConfig}  # session_state key -> the config type it submits
SEEN = "live_seen"  # ids of active jobs this page has drawn; one finishing reruns the page
DRAWN = "live_drawn"  # Snapshot.progress() of the jobs the view drew in its last full run
DRAWN_AT = "live_drawn_at"  # when that was (time.monotonic())
# Who stopped a run, as the runner records it (English, the record's words) and every page translates it.
BY_PRESENTER, BY_OTHER = N_("the presenter"), N_("another page")
STOPPED_HERE = "stopped_here"  # ids this page asked to stop: their line says "stopped by this page"

_queue_slot: ContextVar = ContextVar("queue_slot")


@dataclass
class Watch:
    """What a page shows of one kind of job."""

    ids: list[str]
    own: bool  # started by this page (it may stop them), or another page's, only watched
    stopping: bool = False


@dataclass(frozen=True)
class Snapshot:
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
        return next((j for j in self.queue if j.state == "running"), None)

    @property
    def active(self) -> set[str]:
        """Ids of every queued or running job the page shows, the queue line's included."""
        shown = {s.run_id for jobs in self.shown.values() for s in jobs if s.state in live.ACTIVE}
        return shown | {j.run_id for j in self.queue}

    def progress(self) -> tuple:
        """What the view draws once, per job it shows: state, finished items, and every REDRAW_S of training within
        an epoch (the race's line moves in a long epoch); a change reruns the page."""
        return tuple((s.run_id, s.state, s.done, live.moved(s, REDRAW_S)) for jobs in self.shown.values() for s in jobs)

    def mine(self) -> set[str]:
        """Ids of the jobs this page started."""
        return {i for w in self.watches.values() if w is not None and w.own for i in w.ids}


# -- actions (button callbacks: they run before the script, so the click is seen by this run) ------
def start(kind: str, configs: list) -> None:
    """Queue `configs` as this page's `kind` group: shown from now on and stoppable here. Presenter only."""
    if not access.allowed():  # the button is disabled for a viewer, but a hostile page can still click it
        st.session_state.start_error = _(access.DENIED)
        return
    st.session_state[kind] = Watch(live.submit_group(get_runner(), configs), own=True)


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
            st.session_state[STOPPED_HERE] = {*st.session_state.get(STOPPED_HERE, ()), run_id}
    watch.stopping = True


def stopped_by(jobs: Iterable[JobStatus]) -> str | None:
    """'this page', 'the presenter', 'another page': who stopped the first of `jobs` that somebody stopped."""
    here = st.session_state.get(STOPPED_HERE, set())
    for s in jobs:
        if s.state == "cancelled" and (s.run_id in here or s.stopped_by):
            return _("this page") if s.run_id in here else _(s.stopped_by)
    return None


def controls_ui(kind: str, snap: Snapshot, label: str, keys: tuple[str, str], on_run, ready: bool):
    """Run and Stop for this page's `kind` jobs; returns the column the live status line goes in.

    Only the page's own active jobs hold its Run back: watching another page's, it may queue its own.
    A viewer's Run and Stop are disabled, and their tooltips say why.
    """
    watch, jobs = snap.watches[kind], snap.shown[kind]
    active = watch is not None and live.is_active(jobs)
    own_active = active and watch.own
    may = access.allowed()
    warming = snap.warming  # pressed once they are up, a run starts at once, not after their start-up
    run_col, stop_col, status_col = st.columns([1, 1, 5], vertical_alignment="center")
    # No tooltip of its own while warming: the queue line says it (a presenter's pointer rests on Run after a run).
    run_col.button(label, key=keys[0], type="primary", on_click=on_run,
                   disabled=own_active or not ready or not may or warming, width="stretch",
                   help=access.help_text(_("Starting a run")))  # fmt: skip
    stop_col.button(_("Stop"), key=keys[1], on_click=stop, args=(kind,), disabled=not (active and may),
                    width="stretch", help=access.help_text(_("Stopping a run")))  # fmt: skip
    # Keyed: the line keeps its height (ui.layout) whether its words take one line or two.
    return status_col.container(key=f"{kind}_status")


def status_view(kind: str, labels: Callable, prompt: str, status_col, snap: Snapshot) -> None:
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
    if not watch.own:
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
    if watch is not None and watch.own:
        return watch  # shown until this page starts another; another page's run is only mentioned
    group = live.active_group(get_runner(), KINDS[kind], queue)
    if group and (watch is None or watch.ids != group):
        watch = st.session_state[kind] = Watch(group, own=False)
    return watch


def take(kinds: Iterable[str] = KINDS) -> Snapshot:
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
    return Snapshot(queue, shown, watches, ready=not queue and runner.ready())


# -- the live fragment ------------------------------------------------------------------------
def queue_ui() -> None:
    """The page's role (said when it matters, with the presenter's End) and the queue line's place; the view's live
    fragment fills it."""
    access.role_ui()
    _queue_slot.set(st.empty())


def live_ui(snap: Snapshot, draw: Callable[[Snapshot], None] | None = None) -> None:
    """Draw the page's live text now and, while anything is active, again every TICK_S.

    snap: the view's own read (take()), from which it drew everything else: when a later tick's
    progress() differs, the page reruns, so nothing stays stale. draw(snapshot) draws the view's live
    text (a status line, a progress bar) at every tick; it may write into containers made before this call.
    """
    checking = hardware().state == probe.CHECKING
    st.session_state[SEEN], st.session_state[DRAWN] = snap.active, snap.progress()
    st.session_state[DRAWN_AT] = time.monotonic()
    idle = IDLE_TICK_S if os.environ.get(access.TOKEN_ENV) else None  # `make run`: idle costs nothing
    warming = snap.warming
    every = TICK_S if snap.active or checking or warming else idle
    st.fragment(_tick, run_every=every)(_queue_slot.get(None), tuple(snap.shown), draw, checking, warming)


def _tick(slot, kinds: tuple[str, ...], draw: Callable[[Snapshot], None] | None, checking: bool, warming: bool) -> None:
    priority.viewer_page(not access.allowed())  # a viewer's tick waits for the run under measurement
    snap, seen = take(kinds), st.session_state.get(SEEN, set())
    answered = checking and hardware().state != probe.CHECKING
    warm = warming and snap.ready
    if seen - snap.active or answered or warm or _redraw(snap.progress()):
        st.session_state[SEEN] = snap.active
        # A job started or ended, epochs landed, the GPU check answered or Run may be pressed: the whole page once.
        st.rerun()
    st.session_state[SEEN] = seen | snap.active  # a job another page queued since: its end reruns too
    if slot is not None:
        slot.caption(live.queue_line(snap.queue, snap.mine(), warming=snap.warming))
    if draw is not None:
        draw(snap)


def _redraw(progress: tuple) -> bool:
    """Whether the view's charts are behind enough to draw the whole page again (should_redraw)."""
    return should_redraw(progress, st.session_state.get(DRAWN), st.session_state.get(DRAWN_AT, 0.0), time.monotonic())


def should_redraw(progress: tuple, drawn: tuple | None, drawn_at: float, now: float) -> bool:
    """A job changed state (started, ended) since the last full draw, or a run has its first points: at once. Runs
    taking turns all finished another epoch (a round: the charts show each run at the same epoch): at once too.
    Otherwise epochs landed, or a long epoch moved (Snapshot.progress()): once REDRAW_S has passed since that
    draw, at `drawn_at`."""
    if progress == drawn:
        return False
    if drawn is None or [p[:2] for p in progress] != [d[:2] for d in drawn]:  # (run_id, state) of each job
        return True
    if any(d[2:] == (0, -1) and p[2:] != (0, -1) for p, d in zip(progress, drawn, strict=True)):
        return True  # a run's first points (epoch 1's first calls): the race moves seconds after Run
    running = [p for p in progress if p[1] == "running"]
    rounds = {p[2] for p in running}
    if len(running) > 1 and len(rounds) == 1 and rounds != {d[2] for d in drawn if d[1] == "running"}:
        return True
    return now - drawn_at >= REDRAW_S
