"""How long-running engine work reports progress and learns it should stop.

A task takes two optional callables (the Orange3 pattern, without Qt): `progress(fraction,
message)` and `cancel() -> bool`. Cancellation is cooperative: the engine checks between timing
blocks and sweep points, because a single torch op cannot be interrupted.
"""

from __future__ import annotations

from collections.abc import Callable

ProgressFn = Callable[[float, str], None]
CancelFn = Callable[[], bool]


class Cancelled(Exception):
    """Raised inside the engine when the caller asked it to stop."""


class Reporter:
    """Wraps the optional callbacks so engine code can call them unconditionally.

    `span(start, end)` gives a child reporter whose 0…1 maps onto start…end of this one,
    so nested steps (a sweep point's timing blocks) report overall progress.
    """

    def __init__(
        self,
        progress: ProgressFn | None = None,
        cancel: CancelFn | None = None,
        start: float = 0.0,
        end: float = 1.0,
    ) -> None:
        self._progress = progress
        self._cancel = cancel
        self._start = start
        self._end = end

    def report(self, fraction: float, message: str) -> None:
        if self._progress is not None:
            clamped = min(max(fraction, 0.0), 1.0)
            self._progress(self._start + (self._end - self._start) * clamped, message)

    def check(self) -> None:
        """Raise Cancelled if the caller asked to stop."""
        if self._cancel is not None and self._cancel():
            raise Cancelled("cancelled")

    def span(self, start: float, end: float) -> Reporter:
        width = self._end - self._start
        return Reporter(
            self._progress,
            self._cancel,
            self._start + width * start,
            self._start + width * end,
        )
