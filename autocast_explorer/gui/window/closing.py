"""How the app's window ends: Ctrl-C closes it, and closing never waits on work that cannot stop.

A task stuck where cancellation cannot reach it (the user's forward in `while True`, a module
that never finishes importing, inductor compiling C++) keeps its QThread running, and Qt aborts
the process if a running QThread object is destroyed ("QThread: Destroyed while thread is still
running", SIGABRT). So the app never destroys one. Closing asks every task to stop and waits
`QUICK_STOP_S` (a cancellable run stops within a forward); past that the window stays open and
responsive, saying so, for up to `CLOSE_GRACE_S` in all. If the work ends, the window closes as
usual. If it does not, or the window is closed again, or Ctrl-C comes, the settings are saved,
one line goes to stderr and the process ends at once with the close's own exit code (0, or 130
after Ctrl-C) without tearing down the thread: `os._exit`, as the command line's tail does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING, NoReturn

from PySide6.QtCore import QEvent, QObject, QSocketNotifier, QTimer, Slot

from autocast_explorer.core.runtime.children import end_children
from autocast_explorer.exit_codes import EXIT_INTERRUPTED
from autocast_explorer.gui.tasks.runner import SHUTDOWN_TIMEOUT_S, TaskRunner

if TYPE_CHECKING:
    from autocast_explorer.gui.window.main_window import MainWindow

#: How long closing waits for the work to stop, in all, before the process leaves it behind
#: (a test of the app sets it lower).
CLOSE_GRACE_S = SHUTDOWN_TIMEOUT_S
#: How long the first close blocks the window for a task to reach its next cancellation check.
QUICK_STOP_S = 1.0
#: How often the open window checks whether the work has stopped.
POLL_MS = 50


class AppCloser(QObject):
    """The end of the app: Ctrl-C, closing while work runs, and leaving work that cannot stop.

    `interrupted` says whether Ctrl-C came (the exit code is then 130).
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.interrupted = False
        self._signalled = False
        self._deadline: float | None = None  # set while waiting for work that did not stop
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._check_stopped)
        window.installEventFilter(self)
        # Python runs signal handlers only when it gets control; the wakeup fd makes the
        # event loop hand control to Python as soon as a signal arrives (no polling timer).
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_wakeup)
        self._old_fd = signal.set_wakeup_fd(self._write.fileno())
        self._old_handler = signal.signal(signal.SIGINT, self._on_signal)

    def _runners(self) -> list[TaskRunner]:
        return self._window.findChildren(TaskRunner)

    def _still_running(self, wait_s: float) -> list[str]:
        """The threads still running after waiting at most `wait_s` in all."""
        deadline = time.monotonic() + wait_s
        return [
            name
            for runner in self._runners()
            for name in runner.wait_for_threads(max(0.0, deadline - time.monotonic()))
        ]

    # ---- closing --------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self._window or event.type() != QEvent.Type.Close:
            return False
        if self._deadline is not None:  # closed again while waiting: leave now
            left = self._still_running(0.0)
            if left:
                self.leave(left)
            self._stop_waiting()
            return False  # the work ended meanwhile: the window closes as usual
        for runner in self._runners():
            runner.cancel()
        if not self._still_running(min(QUICK_STOP_S, CLOSE_GRACE_S)):
            return False  # nothing left running: the window closes as usual
        self._deadline = time.monotonic() + max(0.0, CLOSE_GRACE_S - QUICK_STOP_S)
        self._save_settings()
        self._window.statusBar().showMessage("Closing…")
        self._window.show_banner(
            f"Closing: waiting up to {CLOSE_GRACE_S:g} s for the running task to stop "
            "(it does not answer Cancel). Close again, or press Ctrl-C, to quit at once."
        )
        self._poll.start()
        event.ignore()
        return True

    @Slot()
    def _check_stopped(self) -> None:
        left = self._still_running(0.0)
        if not left:
            self._stop_waiting()
            self._window.close()  # nothing running now: closes as usual
        elif self._deadline is not None and time.monotonic() >= self._deadline:
            self.leave(left)

    def _stop_waiting(self) -> None:
        self._poll.stop()
        self._deadline = None

    def leave(self, left: list[str]) -> NoReturn:
        """End the process now, leaving `left` running: settings saved, one line, the close's
        exit code. Never returns (destroying a running QThread would abort)."""
        settings = self._save_settings()
        word = "interrupted" if self.interrupted else "closed"
        names = ", ".join(left) or "a task"
        line = f"{word} while {names} could not stop: its work was abandoned; {settings}\n"
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        with contextlib.suppress(OSError):
            os.write(2, line.encode())
        end_children()  # a compiler inductor started would outlive us (and its temp files)
        os._exit(EXIT_INTERRUPTED if self.interrupted else 0)

    def _save_settings(self) -> str:
        """Save the window's settings now; what to say about them."""
        keeper = getattr(self._window, "settingsKeeper", None)
        if keeper is None:
            return "no settings to save yet"
        try:
            keeper.save()
        except Exception as exc:  # the line must still be written and the process end
            return f"settings not saved ({type(exc).__name__}: {exc})"
        return "settings saved"

    # ---- Ctrl-C ---------------------------------------------------------------------------
    def _on_signal(self, _signum: int, _frame: object) -> None:
        self.interrupted = True
        self._signalled = True

    @Slot()
    def _on_wakeup(self) -> None:
        try:
            while self._read.recv(64):
                pass
        except BlockingIOError:
            pass
        if self._signalled:
            self._signalled = False
            self._window.close()  # a second Ctrl-C while waiting leaves at once

    def restore(self) -> None:
        """Give SIGINT back to Python (the event loop has ended)."""
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(signal.SIGINT, self._old_handler)
        self._read.close()
        self._write.close()
