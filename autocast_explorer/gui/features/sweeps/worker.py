"""What the Sweeps tab runs on the worker thread: core's sweep, its progress thinned out.

Kept apart from the tab so the thread-side code is one small piece with no widgets in it.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.result import SweepResult
    from autocast_explorer.core.sweeps.spec import SweepSpec
    from autocast_explorer.gui.tasks.runner import TaskState

#: Progress reaches the GUI at most this often: core reports every timing block (every few ms
#: at small sizes), and each report repaints the progress bar while torch is being timed.
PROGRESS_INTERVAL_S = 0.2


class ThrottledProgress:
    """Forwards core's progress to the GUI at most every `interval` seconds (worker thread)."""

    def __init__(self, state: TaskState, interval: float = PROGRESS_INTERVAL_S) -> None:
        self.state = state
        self.interval = interval
        self._last = -math.inf

    def __call__(self, fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - self._last >= self.interval or fraction >= 1.0:
            self._last = now
            self.state.set_progress(fraction, message)


def sweep_task(config: ExperimentConfig, spec: SweepSpec, state: TaskState) -> SweepResult:
    """On the worker thread: core's sweep, each point streamed through `set_partial`; a long
    sweep's forecast is a question to the tab first (TaskState.ask)."""
    from autocast_explorer.core.sweeps.runner import run_spec

    return run_spec(
        config,
        spec,
        progress=ThrottledProgress(state),
        cancel=state.is_interruption_requested,
        on_point=state.set_partial,
        confirm=state.ask,
    )
