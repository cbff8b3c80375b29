"""Run one experiment in the window and wait for its outcome, as a test would with qtbot.

`run_and_wait` goes through the same path as pressing Run (`start_experiment`), then waits on
the window's own signals. Each way a run can end without a result raises its own exception
carrying what the window said, so a test that expected a result fails with the reason (the
banner text of a failed run, the input errors that kept Run disabled) rather than a timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QObject, QTimer, SignalInstance, Slot

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.gui import MainWindow

#: Generous: a tiny config takes well under a second, but a loaded 2-core CI machine stalls.
RUN_TIMEOUT_MS = 60_000
#: The first window of a session imports torch on a worker thread.
ENGINE_TIMEOUT_MS = 120_000


class RunDidNotFinish(RuntimeError):
    """A run ended without a result; the subclass says how."""


class RunNotStarted(RunDidNotFinish):
    """Run could not start: PyTorch not loaded, another run in progress, or refused input.

    `errors` holds the inline messages by field (empty when the input was not the reason).
    """

    def __init__(self, message: str, errors: dict[str, str]) -> None:
        super().__init__(message)
        self.errors = errors


class RunFailed(RunDidNotFinish):
    """`experimentFailed(str)`: `message` is what the window shows in its banner."""

    def __init__(self, message: str) -> None:
        super().__init__(f"the run failed: {message}")
        self.message = message


class RunCancelled(RunDidNotFinish):
    """`experimentCancelled()`: the run was cancelled before it finished."""


class RunTimedOut(RunDidNotFinish):
    """No outcome within the timeout; the run was cancelled so no thread outlives the test."""


class _Outcome(QObject):
    """The first of finished / failed / cancelled / timed out, and what it carried."""

    def __init__(self) -> None:
        super().__init__()
        self.kind = ""
        self.result: ExperimentResult | None = None
        self.message = ""
        self.loop = QEventLoop()

    @Slot(object)
    def finished(self, result: ExperimentResult) -> None:
        if self._end("finished"):
            self.result = result

    @Slot(str)
    def failed(self, message: str) -> None:
        if self._end("failed"):
            self.message = message

    @Slot()
    def cancelled(self) -> None:
        self._end("cancelled")

    @Slot()
    def timed_out(self) -> None:
        self._end("timeout")

    def _end(self, kind: str) -> bool:
        """Stop waiting; True when this is the first outcome (the one kept)."""
        first = not self.kind
        if first:
            self.kind = kind
        self.loop.quit()
        return first


def wait_for_engine(window: MainWindow, timeout_ms: int = ENGINE_TIMEOUT_MS) -> None:
    """Block (processing events) until torch is loaded and Run can be enabled."""
    if window.engine_ready():
        return
    window.load_engine()
    if not _wait(window, window.engineReady, timeout_ms, window.engine_ready):
        raise RunNotStarted(
            f"PyTorch did not load within {timeout_ms / 1000:g} s "
            f"(banner: {window.messageBanner.text()!r})",
            {},
        )


def run_and_wait(
    window: MainWindow,
    config: ExperimentConfig | None = None,
    timeout_ms: int = RUN_TIMEOUT_MS,
) -> ExperimentResult:
    """Set `config` (None: keep the controls), start a run, return its ExperimentResult.

    A run forecast to take long (experimentForecast) is answered Run anyway: the test asked
    for it. Raises RunNotStarted, RunFailed, RunCancelled or RunTimedOut (all
    RunDidNotFinish).
    """
    if config is not None:
        window.set_config(config)
    if not window.engine_ready():
        raise RunNotStarted("PyTorch is not loaded yet: wait for engineReady first", {})
    if window.runner.is_running():
        raise RunNotStarted("another task is running on the window's runner", {})

    outcome = _Outcome()

    def run_anyway(_forecast: object) -> None:
        window.run_anyway()

    connections = (
        (window.experimentForecast, run_anyway),
        (window.experimentFinished, outcome.finished),
        (window.experimentFailed, outcome.failed),
        (window.experimentCancelled, outcome.cancelled),
    )
    for signal, slot in connections:
        signal.connect(slot)
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(outcome.timed_out)
    try:
        if not window.start_experiment():
            errors = window.input_errors()
            reason = "; ".join(f"{k}: {v}" for k, v in errors.items()) or "the window refused"
            raise RunNotStarted(f"Run did not start ({reason})", errors)
        deadline.start(timeout_ms)
        if not outcome.kind:
            outcome.loop.exec()
    finally:
        deadline.stop()
        for signal, slot in connections:
            signal.disconnect(slot)
    if outcome.result is not None:
        return outcome.result
    if outcome.kind == "failed":
        raise RunFailed(outcome.message)
    if outcome.kind == "cancelled":
        raise RunCancelled("the run was cancelled before it finished")
    window.cancel_experiment()
    _wait(window, window.experimentCancelled, timeout_ms, lambda: not window.runner.is_running())
    raise RunTimedOut(f"no outcome within {timeout_ms / 1000:g} s; the run was cancelled")


def _wait(
    window: MainWindow, signal: SignalInstance, timeout_ms: int, done: Callable[[], bool]
) -> bool:
    """Process events until `done()` holds or `signal` fires or the time is up; done()."""
    if done():
        return True
    loop = QEventLoop()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    signal.connect(loop.quit)
    try:
        timer.start(timeout_ms)
        loop.exec()
    finally:
        timer.stop()
        signal.disconnect(loop.quit)
    return done()
