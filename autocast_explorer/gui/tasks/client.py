"""Which task is whose: owners share one TaskRunner, each hears only its own outcomes.

The window has one runner (one task at a time, one progress bar, one Cancel). The experiment,
sweeps, placements, the oneDNN probe, the op probe and lesson steps all run on it. `TaskRouter`
is the one place that records who started the running task; each owner holds a `TaskClient`
that re-emits the outcomes of its own tasks and `busyChanged` for everyone's, so buttons can
follow. A task started on the runner directly belongs to nobody: only `busyChanged` fires.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from autocast_explorer.gui.tasks.runner import Task, TaskRunner


class TaskClient(QObject):
    """One owner's handle on the shared runner: its own outcomes, everyone's busy state."""

    started = Signal()
    progress = Signal(float, str)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    #: Any task on the shared runner started or ended (enable/disable buttons).
    busyChanged = Signal()

    def __init__(self, router: TaskRouter, owner: str) -> None:
        super().__init__(router)
        self.setObjectName(f"taskClient:{owner}")
        self._router = router
        self.owner = owner

    @property
    def last_error(self) -> BaseException | None:
        """The exception of the last failed task (any owner's); None after a success."""
        return self._router.runner.last_error

    def start(self, task: Task) -> bool:
        """Run `task` on the shared runner; False (nothing started) while any task runs."""
        return self._router.start(self.owner, task)

    def answer(self, yes: bool) -> None:
        """Answer the question this client's running task asked (TaskState.ask)."""
        if self.is_running():
            self._router.runner.answer(yes)

    def is_running(self) -> bool:
        """True while a task started through this client runs."""
        return self._router.owner() == self.owner

    def busy(self) -> bool:
        """True while the shared runner runs anyone's task."""
        return self._router.runner.is_running()


class TaskRouter(QObject):
    """Routes the shared runner's signals to the client whose owner started the task."""

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._clients: dict[str, TaskClient] = {}
        self._owner: str | None = None
        self._starting: str | None = None
        runner.started.connect(self._on_started)
        runner.progress.connect(self._on_progress)
        runner.partial.connect(self._on_partial)
        runner.finished.connect(self._on_finished)
        runner.failed.connect(self._on_failed)
        runner.cancelled.connect(self._on_cancelled)

    def client(self, owner: str) -> TaskClient:
        """The client of `owner` (made on first use; the same object afterwards)."""
        if owner not in self._clients:
            self._clients[owner] = TaskClient(self, owner)
        return self._clients[owner]

    def owner(self) -> str | None:
        """Who started the running task (None: idle, or started on the runner directly)."""
        return self._owner if self.runner.is_running() else None

    def start(self, owner: str, task: Task) -> bool:
        if self.runner.is_running():
            return False
        self._starting = owner  # the runner emits `started` from inside start()
        try:
            return self.runner.start(task)
        finally:
            self._starting = None

    def _own(self) -> TaskClient | None:
        return self._clients.get(self._owner) if self._owner is not None else None

    def _end(self) -> TaskClient | None:
        client, self._owner = self._own(), None
        for each in list(self._clients.values()):
            each.busyChanged.emit()
        return client

    @Slot()
    def _on_started(self) -> None:
        self._owner = self._starting
        client = self._own()
        if client is not None:
            client.started.emit()
        for each in list(self._clients.values()):
            each.busyChanged.emit()

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        client = self._own()
        if client is not None:
            client.progress.emit(fraction, message)

    @Slot(object)
    def _on_partial(self, obj: object) -> None:
        client = self._own()
        if client is not None:
            client.partial.emit(obj)

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        client = self._end()
        if client is not None:
            client.finished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        client = self._end()
        if client is not None:
            client.failed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        client = self._end()
        if client is not None:
            client.cancelled.emit()
