"""The generic TaskRunner: outcomes on the GUI thread, one task at a time."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QCoreApplication, QObject, QThread, Slot

from autocast_explorer.core.experiment.config import ConfigError
from autocast_explorer.core.runtime.progress import Cancelled
from autocast_explorer.gui.tasks.runner import TaskRunner, TaskState


class Recorder(QObject):
    """Main-thread slots recording what arrived, on which thread, and the runner's state."""

    def __init__(self, runner: TaskRunner) -> None:
        super().__init__()
        self.runner = runner
        self.events: list[tuple] = []
        self.threads: set[bool] = set()
        runner.progress.connect(self.on_progress)
        runner.partial.connect(self.on_partial)
        runner.finished.connect(self.on_finished)
        runner.failed.connect(self.on_failed)
        runner.cancelled.connect(self.on_cancelled)

    def _note(self, *event: object) -> None:
        self.threads.add(QThread.currentThread() is QCoreApplication.instance().thread())
        self.events.append(event)

    @Slot(float, str)
    def on_progress(self, fraction: float, message: str) -> None:
        self._note("progress", fraction, message)

    @Slot(object)
    def on_partial(self, obj: object) -> None:
        self._note("partial", obj)

    @Slot(object)
    def on_finished(self, result: object) -> None:
        self._note("finished", result, self.runner.is_running())

    @Slot(str)
    def on_failed(self, message: str) -> None:
        self._note("failed", message, self.runner.is_running())

    @Slot()
    def on_cancelled(self) -> None:
        self._note("cancelled", self.runner.is_running())


@pytest.fixture
def runner(qtbot):
    r = TaskRunner()
    yield r
    r.shutdown()
    assert r.live_threads() == 0


def streaming(state: TaskState) -> int:
    total = 0
    for i in range(4):
        state.set_progress(i / 4, f"point {i}")
        state.set_partial({"point": i, "thread": threading.current_thread().name})
        total += i
    return total


def test_progress_partials_and_result_arrive_in_order_on_the_gui_thread(qtbot, runner):
    rec = Recorder(runner)
    with qtbot.waitSignal(runner.finished, timeout=10_000):
        assert runner.start(streaming)
    kinds = [e[0] for e in rec.events]
    assert kinds == ["progress", "partial"] * 4 + ["finished"]
    assert [e[1]["point"] for e in rec.events if e[0] == "partial"] == [0, 1, 2, 3]
    # The task really ran on another thread; every slot ran on the GUI thread.
    assert all(e[1]["thread"] != "MainThread" for e in rec.events if e[0] == "partial")
    assert rec.threads == {True}
    assert rec.events[-1] == ("finished", 6, False)


def test_one_task_at_a_time(qtbot, runner):
    release = threading.Event()

    def blocking(state: TaskState) -> str:
        release.wait(10)
        return "first"

    assert runner.start(blocking)
    assert runner.is_running()
    assert not runner.start(streaming)  # refused, not queued
    with qtbot.waitSignal(runner.finished, timeout=10_000) as blocker:
        release.set()
    assert blocker.args == ["first"]


def test_runner_is_idle_when_it_reports_so_a_handler_can_start_again(qtbot, runner):
    rec = Recorder(runner)
    restarted: list[bool] = []

    class Again(QObject):
        @Slot(object)
        def go(self, _result: object) -> None:
            if not restarted:
                restarted.append(runner.start(streaming))

    again = Again()
    runner.finished.connect(again.go)
    with qtbot.waitSignal(runner.finished, timeout=10_000):
        runner.start(streaming)
    assert restarted == [True]
    qtbot.waitUntil(lambda: [e[0] for e in rec.events].count("finished") == 2, timeout=10_000)
    assert all(e[2] is False for e in rec.events if e[0] == "finished")


def test_cancel_reaches_the_task_and_reports_cancelled(qtbot, runner):
    rec = Recorder(runner)
    started = threading.Event()

    def loop(state: TaskState) -> str:
        started.set()
        while True:
            state.check()  # raises core's Cancelled once cancel() was called
            time.sleep(0.005)

    runner.start(loop)
    assert started.wait(10)
    with qtbot.waitSignal(runner.cancelled, timeout=10_000):
        runner.cancel()
    assert rec.events[-1] == ("cancelled", False)
    assert "finished" not in [e[0] for e in rec.events]


def test_a_result_returned_after_cancel_is_discarded(qtbot, runner):
    rec = Recorder(runner)
    go = threading.Event()

    def ignores_cancel(state: TaskState) -> str:
        go.wait(10)
        return "too late"

    runner.start(ignores_cancel)
    runner.cancel()
    with qtbot.waitSignal(runner.cancelled, timeout=10_000):
        go.set()
    assert [e[0] for e in rec.events] == ["cancelled"]


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (ValueError("bad value"), "ValueError: bad value"),
        (ConfigError("batch", "must be an integer ≥ 1 (got 0)"), "batch: must be an integer ≥ 1"),
        (MemoryError(), "out of memory: use smaller widths or batch"),
    ],
)
def test_exceptions_become_readable_failed_messages(qtbot, runner, error, message):
    rec = Recorder(runner)

    def broken(state: TaskState) -> None:
        raise error

    with qtbot.waitSignal(runner.failed, timeout=10_000) as blocker:
        runner.start(broken)
    assert blocker.args[0].startswith(message)
    assert runner.last_error is error
    assert rec.events[-1][2] is False  # idle when failed was emitted


def test_cancelled_exception_is_not_a_failure(qtbot, runner):
    rec = Recorder(runner)

    def stops(state: TaskState) -> None:
        raise Cancelled("stop")

    with qtbot.waitSignal(runner.cancelled, timeout=10_000):
        runner.start(stops)
    assert [e[0] for e in rec.events] == ["cancelled"]


def test_shutdown_cancels_and_waits_for_the_thread(qtbot):
    runner = TaskRunner()
    started = threading.Event()
    stopped = threading.Event()

    def loop(state: TaskState) -> None:
        started.set()
        while not state.is_interruption_requested():
            time.sleep(0.005)
        stopped.set()
        raise Cancelled()

    runner.start(loop)
    assert started.wait(10)
    runner.shutdown()
    assert stopped.is_set()  # shutdown returned only after the task had stopped
    assert runner.live_threads() == 0
    assert not runner.is_running()
