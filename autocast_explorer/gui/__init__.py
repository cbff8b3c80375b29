"""The explorer window (PySide6 + pyqtgraph). Draws results computed by core; never imports torch
at import time, so the window can paint while torch loads on a worker thread.

`from autocast_explorer.gui import MainWindow` is the documented entry point for testers; it is
resolved lazily so that `import autocast_explorer.gui` alone stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autocast_explorer.gui.window.main_window import MainWindow

__all__ = ["MainWindow"]


def __getattr__(name: str) -> Any:
    if name == "MainWindow":
        from autocast_explorer.gui.window.main_window import MainWindow

        return MainWindow
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
