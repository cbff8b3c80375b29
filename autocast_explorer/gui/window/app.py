"""Opening the window: `run_app(argv)` is what `autocast-explorer` (no subcommand), `python -m
autocast_explorer` and `make run` end up calling.

Nothing here imports torch: the window is shown first and loads torch on a worker thread.
Ctrl-C in the terminal closes the window properly (cancel, wait for the worker) and exits 130.
"""

from __future__ import annotations

import gc
import signal
import socket

from PySide6.QtCore import QObject, QSocketNotifier, Slot
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

from autocast_explorer import __version__
from autocast_explorer.core.documents.resources import icon_path
from autocast_explorer.exit_codes import EXIT_INTERRUPTED
from autocast_explorer.gui.shell import style

#: Keeps the application object alive until the interpreter exits (never destroyed before
#: the widgets it owns).
_APP: QApplication | None = None


def create_application(argv: list[str]) -> QApplication:
    """The QApplication (created once), styled for the explorer."""
    global _APP
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv) or ["autocast-explorer"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Autocast Explorer")
    app.setApplicationVersion(__version__)
    # Matches resources/desktop/autocast-explorer.desktop, so docks group the window with it.
    app.setDesktopFileName("autocast-explorer")
    app.setWindowIcon(QIcon(str(icon_path())))
    style.apply_app_style(app)
    style.apply_plot_style()
    _APP = app
    return app


class InterruptWatcher(QObject):
    """Turns SIGINT into closing `window` while Qt's event loop runs (no polling timer).

    Python only runs signal handlers when it gets control; the wakeup fd makes the event
    loop hand control to Python as soon as a signal arrives.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.interrupted = False
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_wakeup)
        self._old_fd = signal.set_wakeup_fd(self._write.fileno())
        self._old_handler = signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, _signum: int, _frame: object) -> None:
        self.interrupted = True

    @Slot()
    def _on_wakeup(self) -> None:
        try:
            while self._read.recv(64):
                pass
        except BlockingIOError:
            pass
        if self.interrupted:
            self._window.close()

    def restore(self) -> None:
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(signal.SIGINT, self._old_handler)
        self._read.close()
        self._write.close()


def run_app(argv: list[str]) -> int:
    """Show the window, run the event loop, shut the worker threads down; the exit code."""
    app = create_application(argv)
    from autocast_explorer.gui.window.main_window import MainWindow

    window = MainWindow(progressive=True)  # paints first, builds the other tabs right after
    window.show()
    watcher = InterruptWatcher(window)
    try:
        code = app.exec()
    finally:
        watcher.restore()
        window.shutdown()
    interrupted = watcher.interrupted
    del watcher, window
    gc.collect()
    return EXIT_INTERRUPTED if interrupted else code
