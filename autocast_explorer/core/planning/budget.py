"""The plan's time budget: one clock and one start for everything a plan does, and what the
search has learnt about how far its timings run past the seconds they are given.

The budget starts when the user asks (the CLI's command, the window's Find plan), not when the
search loop does: building the model, the locator, every compile and every timing spend it.
A timing is given seconds of paired blocks, but its wall time is more: its warm-up calls, and
at another thread count than the baseline's a thread switch and an untimed forward before every
block (OpenMP's pool wakes) — none of which the protocol counts. So the search reads its clock
around every timing, keeps the largest wall ÷ seconds seen for each kind (same threads, other
threads), and gives the next timing of that kind its share divided by it. Torch-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

#: What a timing is assumed to take per second it is given before one of its kind has run: at
#: the baseline's threads its warm-up adds a little; at another count each side's every block
#: pays a thread switch and one untimed forward first — with slow forwards (a block of one
#: call) that doubles it, and a switch costs tens of ms on a busy machine.
PRIOR_OVERRUN = {False: 1.2, True: 2.2}
#: A compile's real time may exceed its forecast (the session's fastest rate): a compile starts
#: only when this many times its forecast, and a timing after it, fit the budget left.
COMPILE_MARGIN = 1.5


@dataclass
class Budget:
    """`seconds` from `start` on `clock`."""

    seconds: float
    clock: Callable[[], float]
    start: float

    @property
    def deadline(self) -> float:
        return self.start + self.seconds

    def spent(self) -> float:
        return self.clock() - self.start

    def left(self) -> float:
        """Seconds left (negative once overspent)."""
        return self.deadline - self.clock()

    def share_left(self) -> float:
        """The budget's share still left (1 at the start, 0 or less once spent)."""
        return self.left() / self.seconds


@dataclass
class Overruns:
    """Wall seconds per second given, by kind of timing (True: at another thread count than
    the baseline's): the largest seen, else PRIOR_OVERRUN."""

    seen: dict[bool, float] = field(default_factory=dict)

    def factor(self, switching: bool) -> float:
        return self.seen.get(switching, PRIOR_OVERRUN[switching])

    def record(self, switching: bool, given: float, took: float) -> None:
        """A timing given `given` seconds took `took` seconds of wall time. One that ended
        sooner (its interval narrow enough early) says nothing of the overrun: not recorded."""
        if given > 0 and took > given:
            ratio = took / given
            self.seen[switching] = max(self.seen.get(switching, ratio), ratio)
