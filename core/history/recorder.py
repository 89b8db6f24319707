"""Recording one job as it runs, the same for the page's runner and the CLI: the history may refuse a write.

A history that is locked past its timeout, or full, refuses a write. Training goes on: a refused epoch waits
and is written with the next one, what is stored stays stored, and note() says what is not. The final state
is tried SAVE_TRIES times (a lock held for a moment); on the page, where the server outlives the job, a final
write still refused is tried again every RETRY_S seconds until the history takes it, so no row is left saying
`running` once the file can be written again (the History view's listing also ends rows of dead processes).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from core.history import paths
from core.history.paths import StoreError
from core.language.i18n import N_
from core.results import RunResult
from core.results.states import State
from core.settings.config import TrainConfig

SAVE_TRIES = 3  # a locked history is tried this many times (each waits store.lock_timeout) before giving up
RETRY_S = 10.0  # between tries of a final state the history refused, while the server runs

# What note() says, filled in English on the runner's thread; a page reads it back in its language (SAID, i18n.again).
FINAL_WAITS = N_("{problem} Its final state will be written when the history takes it; until then it says running.")
RUN_WAITS = N_("{problem} Training goes on; the run will be written when the history takes it.")
EPOCH_WAITS = N_("{problem} Training goes on; epoch {epochs} will be written when the history takes it.")
EPOCHS_WAIT = N_("{problem} Training goes on; epochs {epochs} will be written when the history takes it.")
SAID = (
    FINAL_WAITS,
    RUN_WAITS,
    EPOCH_WAITS,
    EPOCHS_WAIT,
    paths.WRITE_LOCKED,
    paths.WRITE,
    paths.READ_ONLY,
    *paths.SQLITE_WORDS,
)


def epoch_ranges(epochs: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'; [] -> 'none'."""
    spans: list[list[int]] = []
    for n in sorted(epochs):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans) or "none"


class Recorder:
    """One run's writes to the history: begin, each epoch as it finishes, then its final state."""

    def __init__(self, store: Any, run_id: str, config: Any = None):
        self.store, self.run_id, self.config = store, run_id, config
        self.begun = False
        self.stored: list[int] = []
        self.pending: list = []  # epochs the history refused so far, oldest first
        self.problem: StoreError | None = None  # the last refusal, until a write succeeds again
        self._final: Callable[[], None] | None = None  # the final write, while the history refuses it
        self._lock = threading.Lock()

    def begin(self) -> None:
        """Record the run as starting now; StoreError if the history refuses (the CLI stops there, before training)."""
        self.store.begin(self.run_id, self.config)
        self.begun = True

    def start(self) -> str | None:
        """begin(), but a refusal only waits for the next epoch's write (the page's run trains on); its note."""
        with self._lock:
            try:
                self.begin()
            except StoreError as err:
                self.problem = err
        return self.note()

    def epoch(self, metrics: Any, result: Any = None) -> str | None:
        """Write this epoch and any still waiting; on a refusal keep them for the next try. The note, if any."""
        with self._lock:
            self.pending.append(metrics)
            try:
                if not self.begun:
                    self.begin()
                while self.pending:
                    self.store.add_epoch(self.run_id, self.pending[0], result)
                    self.stored.append(self.pending.pop(0).epoch)
                self.problem = None
            except StoreError as err:
                self.problem = err
        return self.note()

    def finish(self, result: Any = None, state: str = State.FAILED, error: str | None = None) -> StoreError | None:
        """Store the final state (the whole result, else `state` and `error`), trying a locked file SAVE_TRIES
        times; the refusal if it still failed (then retry() may write it later)."""
        if result is not None:
            return self.finish_with(lambda: self.store.finish(result))  # inserts the run if it was never begun
        if self.begun:
            return self.finish_with(lambda: self.store.mark(self.run_id, state, error))
        return None  # nothing was ever stored, so nothing is left saying `running`

    def finish_with(self, final: Callable[[], None]) -> StoreError | None:
        """finish() with the final write given: tried SAVE_TRIES times while locked; the refusal if it still failed."""
        with self._lock:
            self._final = final
        for attempt in range(SAVE_TRIES):
            if self.retry():
                return None
            if "locked" not in str(self.problem) or attempt == SAVE_TRIES - 1:
                break
        return self.problem

    def retry(self) -> bool:
        """Try the waiting final write once; True when nothing is left to write."""
        with self._lock:
            if self._final is None:
                return True
            try:
                self._final()
            except StoreError as err:
                self.problem = err
                return False
            self._final, self.pending, self.problem = None, [], None
            return True

    def keep_trying(self, every: float = RETRY_S) -> None:
        """Retry the final write every `every` seconds on a thread of its own until the history takes it."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every) and not self.retry():
                pass

        if self._final is not None:
            threading.Thread(target=loop, name=f"record-{self.run_id}", daemon=True).start()

    def note(self) -> str | None:
        """What the history does not hold yet, in one sentence; None when it holds everything so far."""
        if self.problem is None:
            return None
        if self._final is not None:
            return FINAL_WAITS.format(problem=self.problem)
        epochs = [m.epoch for m in self.pending]
        if not epochs:
            return RUN_WAITS.format(problem=self.problem)
        waiting = EPOCHS_WAIT if len(epochs) > 1 else EPOCH_WAITS
        return waiting.format(problem=self.problem, epochs=epoch_ranges(epochs))

    def kept(self) -> str:
        """' Epochs 1-3 of run ID are stored in it; 4-10 could not be.'"""
        missing, stored = [m.epoch for m in self.pending], epoch_ranges(self.stored)
        if not missing:
            return f" Epochs {stored} of run {self.run_id} are stored in it; only its final state is not."
        return f" Epochs {stored} of run {self.run_id} are stored in it; {epoch_ranges(missing)} could not be."


class JobsRecorder:
    """A Runner's listener: each job's Recorder from its start to its end, and what each event writes."""

    def __init__(self, store: Any, get_store: Callable[[], Any]):
        self.store, self.get_store = store, get_store
        self.recording: dict[str, Recorder] = {}  # run_id -> its recorder, from its start to its end
        # The runner's event -> what it writes; the other events (submitted, progress, ...) write nothing.
        self.handlers = {"started": self.started, "epoch": self.epoch, "finished": self.finished}

    def __call__(self, event: str, job: Any, payload: Any) -> None:
        handler = self.handlers.get(event)
        if handler is not None:
            handler(job, payload)

    def started(self, job: Any, _: Any) -> None:
        """A job begins: a training run's row says `running` from now on."""
        recorder = self.recording[job.run_id] = Recorder(self.store or self.get_store(), job.run_id, job.config)
        if isinstance(job.config, TrainConfig):
            job.note = recorder.start()

    def epoch(self, job: Any, metrics: Any) -> None:
        """A training run's epoch finished: written now, with the run's device info so far."""
        recorder = self.recording.get(job.run_id)  # None: cancelled while queued, never started
        if recorder is not None and isinstance(job.config, TrainConfig):
            job.note = recorder.epoch(metrics, job.result)

    def finished(self, job: Any, _: Any) -> None:
        """A job ended: its final state, tried again later if the history refuses it now."""
        recorder = self.recording.pop(job.run_id, None)
        if recorder is None:
            return  # cancelled while queued: never started, nothing to keep
        job.note = _final(recorder, job) and recorder.note()
        recorder.keep_trying()  # the server outlives the job: its final state is written once the file takes it


def _final(recorder: Recorder, job: Any) -> StoreError | None:
    """The job's final state through its recorder: a training run's result (or its state), another kind whole."""
    result = job.result
    if isinstance(job.config, TrainConfig):
        if isinstance(result, RunResult):
            return recorder.finish(result)
        # No result at all: stopped, killed or failed before its first epoch.
        state = job.state if job.state in (State.CANCELLED, State.INTERRUPTED) else State.FAILED
        return recorder.finish(state=state, error=getattr(job, "error_text", None))
    if hasattr(result, "kind") and hasattr(result, "to_dict"):  # a sweep, stored whole if its result says its kind
        store = recorder.store
        return recorder.finish_with(lambda: store.finish(result, run_id=job.run_id, status=job.state))
    return None
