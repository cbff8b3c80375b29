"""Find QThreads and QTimers a test left running (napari's dangling_qthreads/qtimers idea).

A thread still running when its QThread object is collected aborts the whole test process
later ("QThread: Destroyed while thread is still running"), far from the test that leaked it;
an active timer fires into a closed window. `QtLeakTracker` wraps `QThread.start`,
`QTimer.start` and `QTimer.singleShot` while a test runs, remembers where each was started, and
after the test names every one still running — then stops it, so one leak fails one test
instead of crashing the next.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, QTimer

#: Frames in these files are plumbing; the reported place is the first frame outside them.
PLUMBING = (
    "autocast_explorer/testing/",
    "autocast_explorer\\testing\\",
    "gui/tasks/",
    "pytestqt",
    "_pytest",
    "pluggy",
    "shiboken",
    "PySide6",
)
#: How long a leaked thread gets to stop after quit() before the report moves on.
QUIT_WAIT_MS = 5000


def started_at() -> str:
    """file:line of the first frame outside Qt, pytest and this kit: who started it."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not any(part in name for part in PLUMBING):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


@dataclass
class QtLeakTracker:
    """Records every QThread and QTimer started between `install()` and `uninstall()`.

    `leaks()` lists those still running (a sentence each); `stop_leaks()` also stops them.
    """

    threads: list[tuple[QThread, str]] = field(default_factory=list)
    timers: list[tuple[QTimer, str]] = field(default_factory=list)
    _originals: dict[tuple[type, str], Any] = field(default_factory=dict)

    def install(self) -> None:
        if self._originals:
            return
        thread_start: Callable[..., None] = QThread.start
        timer_start: Callable[..., None] = QTimer.start
        tracker = self

        def tracked_thread_start(thread: QThread, *args: object) -> None:
            tracker.threads.append((thread, started_at()))
            thread_start(thread, *args)

        def tracked_timer_start(timer: QTimer, *args: object) -> None:
            tracker.timers.append((timer, started_at()))
            timer_start(timer, *args)

        def tracked_single_shot(msec: int, *rest: object) -> None:
            timer = single_shot_timer(rest)
            tracker.timers.append((timer, started_at()))
            timer_start(timer, msec)

        replacements: dict[tuple[type, str], object] = {
            (QThread, "start"): tracked_thread_start,
            (QTimer, "start"): tracked_timer_start,
            (QTimer, "singleShot"): staticmethod(tracked_single_shot),
        }
        self._originals = {(cls, name): cls.__dict__[name] for cls, name in replacements}
        _set_attributes(replacements)

    def uninstall(self) -> None:
        if not self._originals:
            return
        _set_attributes(self._originals)
        self._originals = {}

    def leaks(self) -> list[str]:
        """One sentence per QThread still running or QTimer still active, with where it began."""
        found = []
        for thread, where in self.threads:
            if _alive(thread, QThread.isRunning):
                found.append(f"QThread {thread.objectName()!r} started at {where}")
        for timer, where in self.timers:
            if _alive(timer, QTimer.isActive):
                found.append(f"QTimer (interval {timer.interval()} ms) started at {where}")
        return found

    def stop_leaks(self) -> list[str]:
        """Report and stop every leak (quit + wait for threads, stop for timers)."""
        found = self.leaks()
        for thread, _where in self.threads:
            if _alive(thread, QThread.isRunning):
                thread.quit()
                thread.wait(QUIT_WAIT_MS)
        for timer, _where in self.timers:
            if _alive(timer, QTimer.isActive):
                timer.stop()
        return found


def _set_attributes(values: dict[tuple[type, str], object]) -> None:
    """Put each value on its class: the patching mypy refuses as plain assignment to a method."""
    for (cls, name), value in values.items():
        setattr(cls, name, value)


def _alive(obj: QObject, check: Callable[[Any], bool]) -> bool:
    try:
        return bool(check(obj))
    except RuntimeError:  # the C++ object is gone, so it cannot be running
        return False


def single_shot_timer(rest: tuple[object, ...]) -> QTimer:
    """A one-shot QTimer for any QTimer.singleShot(msec, …) overload, not yet started.

    Overloads: (functor), (timerType, functor), (context, functor), (timerType, context,
    functor), (receiver, "1slot()"/b"slot()"). A context or receiver becomes the timer's
    parent, so the timer goes when it goes, as Qt's own single shot does.
    """
    args = [a for a in rest if not isinstance(a, Qt.TimerType)]
    timer_type = next((a for a in rest if isinstance(a, Qt.TimerType)), None)
    timer = QTimer()
    timer.setSingleShot(True)
    if timer_type is not None:
        timer.setTimerType(timer_type)
    if len(args) == 1 and callable(args[0]):
        timer.timeout.connect(args[0])
        return timer
    if len(args) == 2 and isinstance(args[0], QObject):
        context, target = args[0], args[1]
        timer.setParent(context)
        if isinstance(target, str | bytes):
            member = target.decode() if isinstance(target, bytes) else target
            name = member.lstrip("0123456789").split("(")[0]
            timer.timeout.connect(getattr(context, name))
        else:
            timer.timeout.connect(target)
        return timer
    raise TypeError(f"QTimer.singleShot: unsupported arguments {rest!r}")
