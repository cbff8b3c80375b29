"""Shared values and steps for the window tests."""

from __future__ import annotations

from PySide6.QtCore import Qt

from autocast_explorer.core.experiment.config import ExperimentConfig

#: The smallest config that still exercises every code path (guards, capture, ABAB timing).
TINY = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02)
#: Generous: the first window of a session imports torch on a busy 2-core machine.
ENGINE_TIMEOUT_MS = 120_000
RUN_TIMEOUT_MS = 60_000


def run_to_end(qtbot, win, timeout: int = RUN_TIMEOUT_MS):
    """Click Run and return the ExperimentResult carried by experimentFinished."""
    with qtbot.waitSignal(win.experimentFinished, timeout=timeout) as blocker:
        qtbot.mouseClick(win.runButton, Qt.MouseButton.LeftButton)
    return blocker.args[0]
