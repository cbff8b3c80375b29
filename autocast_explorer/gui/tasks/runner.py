"""A generic runner for slow work: a plain function on a QThread, results on the GUI thread.

The pattern is Orange3's (a task is a plain function that receives a state object) with
superqt's guarantees (every outcome reaches a handler on the GUI thread, cancellation is
cooperative). A task looks like::

    def task(state: TaskState) -> object:
        for i, point in enumerate(points):
            if state.is_interruption_requested():
                raise Cancelled()
            state.set_progress(i / len(points), f"point {i + 1}")
            state.set_partial(measure(point))
        return summary

`TaskRunner.start(task)` runs it on a fresh QThread (a `_Worker` QObject moved there).  The
worker's signals reach `@Slot` methods of the runner, which lives on the GUI thread, so Qt
queues them across threads; the runner re-emits `progress`, `partial`, `finished`, `failed`
and `cancelled` there.  It is idle again *before* it emits an outcome, so a handler may start
the next task at once while the old QThread is still winding down (it stays referenced until
its own `finished`, which avoids "QThread: Destroyed while thread is still running").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QDeadlineTimer, QObject, QThread, Signal, Slot

from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.progress import Cancelled

log = logging.getLogger(__name__)

Task = Callable[["TaskState"], Any]
#: How long closing waits for a task to reach its next cancellation check.
SHUTDOWN_TIMEOUT_S = 10.0


class _Answer:
    """The GUI thread's answer to a task's question (TaskState.ask), across threads."""

    def __init__(self) -> None:
        self.given = threading.Event()
        self.yes = False

    def give(self, yes: bool) -> None:
        self.yes = yes
        self.given.set()


class TaskState:
    """What a running task may do: report progress, stream partial results, ask the person
    (and wait), ask to stop.

    All are safe to call from the worker thread; the reports arrive on the GUI thread.
    """

    def __init__(
        self, worker: _Worker, cancel_event: threading.Event, answer: _Answer | None = None
    ) -> None:
        self._worker = worker
        self._cancel = cancel_event
        self._answer = answer or _Answer()

    def ask(self, question: object, poll_s: float = 0.05) -> bool:
        """Stream `question` as a partial result, then wait for the GUI thread's answer
        (TaskRunner.answer); False once the task is cancelled meanwhile (Cancel, closing)."""
        self._answer.given.clear()
        self.set_partial(question)
        while not self._answer.given.wait(poll_s):
            if self._cancel.is_set():
                return False
        return self._answer.yes

    def set_progress(self, fraction: float, message: str = "") -> None:
        self._worker.progress.emit(self._worker.run_id, float(fraction), str(message))

    def set_partial(self, obj: object) -> None:
        """Stream a partial result (e.g. one sweep point); send plain data, not live tensors."""
        self._worker.partial.emit(self._worker.run_id, obj)

    def is_interruption_requested(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        """Raise core's Cancelled if the runner asked the task to stop."""
        if self._cancel.is_set():
            raise Cancelled("cancelled")


def describe_error(exc: BaseException) -> str:
    """A sentence a person can act on, not a traceback."""
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return str(exc) if str(exc) else "out of memory: use smaller widths or batch"
    text = str(exc).strip() or "(no message)"
    return f"{type(exc).__name__}: {text}"


class _Worker(QObject):
    """Runs one task once on its QThread; every signal carries the run id it belongs to."""

    progress = Signal(int, float, str)
    partial = Signal(int, object)
    finished = Signal(int, object)
    failed = Signal(int, object)
    cancelled = Signal(int)

    def __init__(
        self, run_id: int, task: Task, cancel_event: threading.Event, answer: _Answer
    ) -> None:
        super().__init__()
        self.run_id = run_id
        self._task: Task | None = task
        self._cancel = cancel_event
        self._answer = answer

    @Slot()
    def run(self) -> None:
        task, self._task = self._task, None
        try:
            if task is None:
                return
            state = TaskState(self, self._cancel, self._answer)
            try:
                result = task(state)
            except Cancelled:
                self.cancelled.emit(self.run_id)
            except BaseException as exc:
                # SystemExit or KeyboardInterrupt raised inside a task end the task, not the
                # program: the window must hear an outcome or Run would stay disabled.
                if isinstance(exc, ConfigError):  # a refused input, not a bug: no traceback
                    log.info("task refused: %s", exc)
                else:
                    log.error("task failed", exc_info=exc)
                exc.__traceback__ = None  # do not keep the task's frames (and tensors) alive
                self.failed.emit(self.run_id, exc)
            else:
                if self._cancel.is_set():
                    # The person asked to stop: a result that slipped through is discarded.
                    self.cancelled.emit(self.run_id)
                else:
                    self.finished.emit(self.run_id, result)
        finally:
            # Ends this thread's event loop once run() returns; safe from the thread itself.
            self.thread().quit()


class TaskRunner(QObject):
    """Runs one task at a time on a QThread and reports on the GUI thread.

    Signals: `started()`, `progress(float, str)`, `partial(object)`, `finished(object)`,
    `failed(str)` (readable message; the exception is in `last_error`), `cancelled()`.
    """

    started = Signal()
    progress = Signal(float, str)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None, name: str = "task") -> None:
        super().__init__(parent)
        self._name = name
        self._next_id = 1
        self._active_id: int | None = None
        self._cancel_event: threading.Event | None = None
        self._answer: _Answer | None = None
        #: Threads (with their workers) not yet finished: kept referenced until they are.
        self._threads: list[tuple[QThread, _Worker]] = []
        self.last_error: BaseException | None = None

    # ---- state ----------------------------------------------------------------------------
    def is_running(self) -> bool:
        """True from start() until the outcome signal (not until the QThread has ended)."""
        return self._active_id is not None

    def live_threads(self) -> int:
        """QThreads started by this runner that have not reported `finished` yet."""
        return len(self._threads)

    # ---- control --------------------------------------------------------------------------
    def start(self, task: Task) -> bool:
        """Run `task(state)` on a new QThread; refused (False) while another task runs."""
        if self._active_id is not None:
            return False
        run_id = self._next_id
        self._next_id += 1
        cancel_event = threading.Event()
        # Parented to the runner, so Qt (not Python's refcount) decides when it is deleted.
        thread = QThread(self)
        thread.setObjectName(f"{self._name}-{run_id}")
        answer = _Answer()
        worker = _Worker(run_id, task, cancel_event, answer)
        worker.moveToThread(thread)
        worker.progress.connect(self._on_progress)
        worker.partial.connect(self._on_partial)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        worker.cancelled.connect(self._on_cancelled)
        thread.started.connect(worker.run)
        thread.finished.connect(self._on_thread_finished)
        self._threads.append((thread, worker))
        self._active_id = run_id
        self._cancel_event = cancel_event
        self._answer = answer
        self.last_error = None
        self.started.emit()
        thread.start()
        return True

    def answer(self, yes: bool) -> None:
        """Answer the question the running task asked (TaskState.ask)."""
        if self._answer is not None:
            self._answer.give(yes)

    def cancel(self) -> None:
        """Ask the running task to stop at its next check; `cancelled` follows."""
        if self._cancel_event is not None:
            self._cancel_event.set()
        for thread, _worker in self._threads:
            thread.requestInterruption()

    def wait_for_threads(self, timeout_s: float) -> list[str]:
        """Wait at most `timeout_s` for this runner's threads to end, asking none to stop.

        Returns the names of those still running; they stay referenced, so Qt never destroys
        a running thread (the app's closing polls this while a task cannot stop).
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        for thread, _worker in list(self._threads):
            thread.quit()
            left_ms = max(0, round((deadline - time.monotonic()) * 1000))
            thread.wait(QDeadlineTimer(left_ms))
        self._reap()
        return [thread.objectName() for thread, _worker in self._threads]

    def shutdown(self, timeout_s: float = SHUTDOWN_TIMEOUT_S) -> list[str]:
        """Cancel, then quit and wait at most `timeout_s` in all for this runner's threads.

        Closing must finish even when a task is stuck inside one long torch op (which cannot
        be interrupted). Returns the names of the threads still running when the time was up
        (also logged); they stay referenced, so Qt never destroys a running thread.
        """
        self.cancel()
        left = self.wait_for_threads(timeout_s)
        self._become_idle()
        if left:
            log.warning(
                "%s: %d thread(s) still running after %.1f s: %s",
                self._name,
                len(left),
                timeout_s,
                ", ".join(left),
            )
        return left

    # ---- slots (GUI thread) ---------------------------------------------------------------
    def _current(self, run_id: int) -> bool:
        return run_id == self._active_id

    def _become_idle(self) -> None:
        self._active_id = None
        self._cancel_event = None
        self._answer = None

    @Slot(int, float, str)
    def _on_progress(self, run_id: int, fraction: float, message: str) -> None:
        if self._current(run_id):
            self.progress.emit(fraction, message)

    @Slot(int, object)
    def _on_partial(self, run_id: int, obj: object) -> None:
        if self._current(run_id):
            self.partial.emit(obj)

    @Slot(int, object)
    def _on_finished(self, run_id: int, result: object) -> None:
        if self._current(run_id):
            self._become_idle()
            self.finished.emit(result)

    @Slot(int, object)
    def _on_failed(self, run_id: int, exc: object) -> None:
        if self._current(run_id):
            self._become_idle()
            self.last_error = exc if isinstance(exc, BaseException) else None
            message = describe_error(exc) if isinstance(exc, BaseException) else str(exc)
            self.failed.emit(message)

    @Slot(int)
    def _on_cancelled(self, run_id: int) -> None:
        if self._current(run_id):
            self._become_idle()
            self.cancelled.emit()

    @Slot()
    def _on_thread_finished(self) -> None:
        sender = self.sender()
        self._reap(sender if isinstance(sender, QThread) else None)

    def _reap(self, ending: QThread | None = None) -> None:
        """Let go of threads that have ended.

        `ending` has emitted `finished` and is past its last Python code, so wait() returns
        at once. The worker (Python-owned) is dropped only after its thread has stopped; the
        thread (owned by the runner) is deleted later, as it may still be dispatching.
        """
        alive = []
        for thread, worker in self._threads:
            if thread is ending or thread.isFinished():
                thread.wait()
                thread.deleteLater()
            else:
                alive.append((thread, worker))
        self._threads = alive
