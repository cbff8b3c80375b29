"""A panel's own tasks on the window's shared TaskRunner.

The window has one runner (one task at a time). Each panel that runs work on it (sweeps,
placements …) needs the outcomes of *its own* tasks only, and to know when the runner is busy
with anyone's so its buttons can follow. This QObject does that routing on the GUI thread.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from autocast_explorer.gui.tasks.runner import Task, TaskRunner


class RunnerClient(QObject):
    """Re-emits the runner's signals for tasks started through `start`; `busyChanged` for all."""

    started = Signal()
    progress = Signal(float, str)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    #: Any task on the shared runner started or ended (enable/disable buttons).
    busyChanged = Signal()

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._own = False
        runner.started.connect(self._on_started)
        runner.progress.connect(self._on_progress)
        runner.partial.connect(self._on_partial)
        runner.finished.connect(self._on_finished)
        runner.failed.connect(self._on_failed)
        runner.cancelled.connect(self._on_cancelled)

    def start(self, task: Task) -> bool:
        """Run `task` on the shared runner; False (nothing started) while any task runs."""
        if self.runner.is_running():
            return False
        self._own = True  # before start(): the runner emits `started` from inside it
        if not self.runner.start(task):
            self._own = False
            return False
        return True

    def is_running(self) -> bool:
        """True while a task started through this client runs."""
        return self._own and self.runner.is_running()

    def busy(self) -> bool:
        """True while the shared runner runs anyone's task."""
        return self.runner.is_running()

    def cancel(self) -> None:
        if self.is_running():
            self.runner.cancel()

    def _take(self) -> bool:
        own, self._own = self._own, False
        return own

    @Slot()
    def _on_started(self) -> None:
        if self._own:
            self.started.emit()
        self.busyChanged.emit()

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        if self._own:
            self.progress.emit(fraction, message)

    @Slot(object)
    def _on_partial(self, obj: object) -> None:
        if self._own:
            self.partial.emit(obj)

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        own = self._take()
        self.busyChanged.emit()
        if own:
            self.finished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        own = self._take()
        self.busyChanged.emit()
        if own:
            self.failed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        own = self._take()
        self.busyChanged.emit()
        if own:
            self.cancelled.emit()
