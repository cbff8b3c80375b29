"""qt_leak_check fails a test that leaves a QThread running or a QTimer active, and says where."""

from __future__ import annotations

import pytest

import autocast_explorer.testing as kit
from autocast_explorer.testing.leaks import QtLeakTracker, single_shot_timer

LEAKY_TESTS = """
import pytest
from PySide6.QtCore import QObject, QThread, QTimer

KEEP = []


def test_timer_left_running(qt_leak_check):
    timer = QTimer()
    timer.start(60_000)
    KEEP.append(timer)


def test_single_shot_left_pending(qt_leak_check):
    QTimer.singleShot(60_000, lambda: None)


def test_thread_left_running(qt_leak_check):
    thread = QThread()
    thread.setObjectName("forgotten")
    thread.start()
    KEEP.append(thread)


def test_everything_stopped(qt_leak_check):
    timer = QTimer()
    timer.start(60_000)
    thread = QThread()
    thread.start()
    timer.stop()
    thread.quit()
    thread.wait()
"""


def test_leaks_fail_their_own_test_with_the_line_that_started_them(pytester, qapp):
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    outcome = pytester.runpytest_inprocess("-p", kit.__name__, "-p", "no:randomly")
    outcome.assert_outcomes(passed=4, errors=3)
    text = outcome.stdout.str()
    assert "QTimer (interval 60000 ms) started at" in text
    assert "QThread 'forgotten' started at" in text
    for statement in ("timer.start(60_000)", "QTimer.singleShot(", "thread.start()"):
        assert f"test_leaky.py:{line_of(statement)}" in text, statement


def line_of(statement: str) -> int:
    """1-based line of the first `statement` in the file pytester wrote (it strips one newline)."""
    lines = LEAKY_TESTS.strip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if statement in line)


def test_the_tracker_puts_qt_back_as_it_was():
    from PySide6.QtCore import QThread, QTimer

    before = (QThread.start, QTimer.start, QTimer.__dict__["singleShot"])
    tracker = QtLeakTracker()
    tracker.install()
    assert QTimer.start is not before[1]
    tracker.uninstall()
    assert (QThread.start, QTimer.start, QTimer.__dict__["singleShot"]) == before


def test_single_shot_with_a_context_object_is_owned_by_it(qapp):
    from PySide6.QtCore import QObject, Qt

    context = QObject()
    fired = []
    timer = single_shot_timer((Qt.TimerType.PreciseTimer, context, lambda: fired.append(1)))
    assert timer.parent() is context
    assert timer.timerType() == Qt.TimerType.PreciseTimer
    assert timer.isSingleShot()
    timer.timeout.emit()
    assert fired == [1]
    with pytest.raises(TypeError):
        single_shot_timer(("not a target",))
