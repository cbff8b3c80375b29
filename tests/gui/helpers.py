"""Shared values and steps for the window tests (the kit's, under the names the tests use)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from autocast_explorer.testing.configs import tiny_experiment
from autocast_explorer.testing.running import ENGINE_TIMEOUT_MS, RUN_TIMEOUT_MS

__all__ = ["ENGINE_TIMEOUT_MS", "RUN_TIMEOUT_MS", "TINY", "answer_run_anyway", "run_to_end"]

#: The smallest config that still exercises every code path (guards, capture, ABAB timing).
TINY = tiny_experiment()


def run_to_end(qtbot, win, timeout: int = RUN_TIMEOUT_MS):
    """Click Run and return the ExperimentResult carried by experimentFinished."""
    with qtbot.waitSignal(win.experimentFinished, timeout=timeout) as blocker:
        qtbot.mouseClick(win.runButton, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def answer_run_anyway(win) -> None:
    """Every long run's forecast in `win` is answered Run anyway (the test wants it to run)."""
    win.experimentForecast.connect(lambda _forecast: win.run_anyway())


def tiny_gru(seq: int = 4):
    """A one-layer GRU small enough for a test: under autocast its cell is mixed (float32
    out, bfloat16 matrix products inside)."""
    from autocast_explorer.core.experiment.config import ExperimentConfig

    return ExperimentConfig(
        model="rnn", cell="gru", features=8, hidden=16, seq=seq, depth=1, batch=4, min_time=0.02
    )
