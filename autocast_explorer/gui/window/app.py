"""Opening the window: `run_app(argv)` is what `autocast-explorer` (no subcommand), `python -m
autocast_explorer` and `make run` end up calling.

Nothing here imports torch: the window is shown first and loads torch on a worker thread.
Importing this module makes every later import cheaper (pyside_import_scan.py).
Ctrl-C in the terminal closes the window properly (cancel, wait for the worker) and exits 130;
closing while a task cannot stop is closing.py's.
"""

from __future__ import annotations

import gc

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from autocast_explorer import __version__
from autocast_explorer.core.documents.resources import icon_path
from autocast_explorer.exit_codes import EXIT_INTERRUPTED
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.window.closing import AppCloser
from autocast_explorer.gui.window.pyside_import_scan import scan_imports_quickly

# Every module imported from now on (the window's, pyqtgraph's, torch's) is checked for PySide6
# the quick way: the window's process imports this module before any of them.
scan_imports_quickly()

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


def run_app(argv: list[str]) -> int:
    """Show the window, run the event loop, shut the worker threads down; the exit code."""
    # Start-up allocates many objects that live as long as the window and frees few: no
    # cyclic collection until every tab is built (each one walks all of them, torch's too;
    # about 0.1 s of the 1.9 s to a ready window on a 2-core EPYC), then they are frozen out
    # of later collections.
    gc.disable()
    app = create_application(argv)
    from autocast_explorer.gui.window.main_window import MainWindow

    window = MainWindow(progressive=True)  # paints first, builds the other tabs right after
    window.featuresInstalled.connect(_collect_from_now)
    window.show()
    closer = AppCloser(window)
    try:
        code = app.exec()
    finally:
        closer.restore()
        left = window.shutdown()
    if left:  # the loop ended another way with work still running: never destroy its thread
        closer.leave(left)
    interrupted = closer.interrupted
    del closer, window
    gc.collect()
    return EXIT_INTERRUPTED if interrupted else code


def _collect_from_now() -> None:
    """Start-up is over: what it built stays, so later collections need not walk it."""
    gc.freeze()
    gc.enable()
