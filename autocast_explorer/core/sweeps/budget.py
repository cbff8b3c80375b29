"""How an adaptive sweep hands out its time: where an interval is wide and can still close.

A fixed sweep gives every point `min_time`. An adaptive point times each mode for
ADAPTIVE_MIN_SHARE of its half of that, then stops as soon as its speedup's interval is within
±SWEEP_TARGET. Until it has a 95% interval at all, a point may go on to its own `min_time` plus
up to as much again of what earlier points left unspent (`limit`, as before: an interval is the
least a point must say). Once it has one, it may use its own `min_time`, and beyond it what
earlier points left while the sweep's timing stays within ADAPTIVE_BUDGET of the fixed sweep's
(`cap`) — but only while its target is in reach: once the pairs it still needs (projected from
its interval's width and what a round costs, timing.TargetBudget) would not fit, it stops at
its even share of what is left of the adaptive budget (`fair`), and the time goes to points it
can help.

The allowance per point alone (its own `min_time`, plus up to one more of what earlier points
left) missed both ways on an AVX2-only EPYC: the large batches, whose single calls are slow and
noisy, spent all of it without reaching ±3% (batch 2048 stopped at ±12.6%), and the sweep took
0.55–0.68 of the fixed sweep's time.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The share of the fixed sweep's timing (points × min_time) an adaptive sweep hands out to
#: points that have an interval (one short of it may go past): its target is half the fixed
#: sweep's wall time, less what the budget does not count (each point's input, evidence and
#: statistics).
ADAPTIVE_BUDGET = 0.45
#: An adaptive point times each mode for at least this share of its half of `min_time`.
#: Measured (bench/adaptive_sweep.py, quiet, 2 cores): 0.2 took 0.58–0.71× the fixed sweep's
#: time, 0.1 about 0.55× (median's interval) and 0.49× (trimmed mean's); 0.05 was no faster.
ADAPTIVE_MIN_SHARE = 0.1


@dataclass(frozen=True)
class PointAllowance:
    """Seconds one point's timing may take, both modes and their cold calls together."""

    #: The most while it has no 95% interval.
    limit: float
    #: The most once it has one: its own `min_time`, and what it may borrow within the budget.
    cap: float
    #: Its even share of what is left of the adaptive budget: where it stops once its target
    #: is out of reach (never more than `cap`).
    fair: float


class SweepBudget:
    """An adaptive sweep's timing, handed out point by point in order."""

    def __init__(self, points: int, min_time: float, share: float = ADAPTIVE_BUDGET) -> None:
        self.points = points
        self.min_time = min_time
        self.total = points * min_time * share
        self.done = 0
        self.spent = 0.0

    def next_point(self) -> PointAllowance:
        """The next point's allowance (see the module's docstring)."""
        own, spent = self.min_time, self.spent
        unspent = max(self.done * own - spent, 0.0)  # what earlier points left of their own
        room = self.total - spent - own  # the adaptive budget beyond this point's own
        cap = own + max(0.0, min(unspent, room))
        fair = max(self.total - spent, 0.0) / max(self.points - self.done, 1)
        limit = max(own + min(unspent, own), cap)
        return PointAllowance(limit=limit, cap=cap, fair=min(fair, cap))

    def spend(self, seconds: float) -> None:
        """A point finished after `seconds` of timing."""
        self.spent += seconds
        self.done += 1
