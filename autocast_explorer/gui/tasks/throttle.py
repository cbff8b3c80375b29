"""Progress from a worker thread, thinned out for the GUI.

Core reports progress every timing block (every few ms at small sizes), and each report
repaints a progress bar while torch is being timed; a long measurement (a sweep, a plan's
search) forwards at most a few reports a second, and always the last.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.gui.tasks.runner import TaskState

#: Progress reaches the GUI at most this often.
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
