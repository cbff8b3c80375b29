"""Shared values and steps for the window tests (the kit's, under the names the tests use)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from autocast_explorer.testing.configs import tiny_experiment
from autocast_explorer.testing.running import ENGINE_TIMEOUT_MS, RUN_TIMEOUT_MS

__all__ = ["ENGINE_TIMEOUT_MS", "RUN_TIMEOUT_MS", "TINY", "run_to_end"]

#: The smallest config that still exercises every code path (guards, capture, ABAB timing).
TINY = tiny_experiment()


def run_to_end(qtbot, win, timeout: int = RUN_TIMEOUT_MS):
    """Click Run and return the ExperimentResult carried by experimentFinished."""
    with qtbot.waitSignal(win.experimentFinished, timeout=timeout) as blocker:
        qtbot.mouseClick(win.runButton, Qt.MouseButton.LeftButton)
    return blocker.args[0]
