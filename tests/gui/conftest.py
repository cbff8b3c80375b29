"""Fixtures for window tests: a ready MainWindow, tiny configs, and a guard against leaks.

`no_dangling_qt` (autouse here) fails any test that leaves a QThread running or a QTimer
active after pytest-qt has closed its widgets — napari's dangling_qthreads/qtimers idea. A
leaked thread is how "QThread: Destroyed while thread is still running" aborts happen later.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QThread, QTimer

from tests.gui.helpers import ENGINE_TIMEOUT_MS, TINY


def _caller() -> str:
    """file:line of the first frame outside Qt/pytest-qt/this file (where it was started)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        internal = ("pytestqt", "conftest.py", "gui/tasks/")
        if not any(part in name for part in internal):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


@pytest.fixture(autouse=True)
def no_dangling_qt(qtbot, monkeypatch) -> Iterator[None]:
    threads: list[tuple[QThread, str]] = []
    timers: list[tuple[QTimer, str]] = []
    thread_start = QThread.start
    timer_start = QTimer.start

    def tracked_thread_start(self: QThread, *args: object) -> None:
        threads.append((self, _caller()))
        thread_start(self, *args)

    def tracked_timer_start(self: QTimer, *args: object) -> None:
        timers.append((self, _caller()))
        timer_start(self, *args)

    def tracked_single_shot(msec: int, *target: object) -> None:
        timer = QTimer()
        timer.setSingleShot(True)
        if len(target) == 1:
            timer.timeout.connect(target[0])
        else:
            receiver, member = target[0], target[1]
            timer.timeout.connect(getattr(receiver, str(member).lstrip("12").split("(")[0]))
        timers.append((timer, _caller()))
        timer_start(timer, msec)

    monkeypatch.setattr(QThread, "start", tracked_thread_start)
    monkeypatch.setattr(QTimer, "start", tracked_timer_start)
    monkeypatch.setattr(QTimer, "singleShot", staticmethod(tracked_single_shot))
    yield
    # pytest-qt has closed the widgets added with qtbot.addWidget before this point.
    running = []
    for thread, where in threads:
        try:
            if thread.isRunning():
                running.append(f"QThread {thread.objectName()!r} started at {where}")
                thread.quit()
                thread.wait(5000)
        except RuntimeError:  # C++ object already deleted: it cannot be running
            pass
    for timer, where in timers:
        try:
            if timer.isActive():
                running.append(f"QTimer started at {where}")
                timer.stop()
        except RuntimeError:
            pass
    assert not running, "left running after the test:\n" + "\n".join(running)


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch) -> Iterator[None]:
    """Each test gets its own settings file and preset folder: never the user's, never shared.

    $AUTOCAST_EXPLORER_SETTINGS is what gui.settings reads; QSettings.setPath also moves Qt's
    default per-user INI location in case anything builds a QSettings of its own.
    """
    from PySide6.QtCore import QSettings

    config_home = tmp_path / "config-home"
    monkeypatch.setenv("AUTOCAST_EXPLORER_SETTINGS", str(config_home / "settings.ini"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(config_home / "qt"))
        QSettings.setPath(QSettings.Format.NativeFormat, scope, str(config_home / "qt"))
    yield


@pytest.fixture
def window(qtbot):
    """A shown MainWindow with torch loaded (Run enabled) and a tiny config set."""
    from autocast_explorer.gui import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(win.engine_ready, timeout=ENGINE_TIMEOUT_MS)
    win.set_config(TINY)
    assert win.runButton.isEnabled()
    return win
