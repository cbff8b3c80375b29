"""An adaptive sweep's time, handed out where an interval is wide and can still close: the
projection of the pairs a target needs, a point giving up once the target is out of its reach,
and the sweep's budget point by point. No timing is asserted: every block is scripted."""

import contextlib
import itertools
import math

import pytest

from autocast_explorer.core.experiment import timing
from autocast_explorer.core.experiment.interval import (
    LEVEL,
    MIN_PAIRS_95,
    TRIM,
    pairs_needed,
    speedup_interval,
    t_quantile,
)
from autocast_explorer.core.sweeps.budget import ADAPTIVE_BUDGET, SweepBudget

TARGET = 0.03


def yuen_half(n: int, variance: float) -> float:
    """Yuen's half-width in logs for n pairs of this winsorized variance, written out here."""
    kept = n - 2 * int(TRIM * n)
    return t_quantile(0.975, kept - 1) * math.sqrt((n - 1) * variance / (kept * (kept - 1)))


# ---- the projection -----------------------------------------------------------------------------
def test_the_pairs_needed_are_the_fewest_whose_interval_would_be_within_the_target():
    # 10 ratios spread ±15%: their winsorized variance, carried to more pairs.
    ratios = sorted([0.85, 0.9, 0.95, 1.0, 1.0, 1.0, 1.05, 1.1, 1.15, 1.0])
    logs = [math.log(r) for r in ratios]
    wins = [logs[2]] * 2 + logs[2:8] + [logs[7]] * 2
    variance = sum((x - sum(wins) / 10) ** 2 for x in wins) / 9
    interval = speedup_interval(ratios)
    assert interval.half_width > TARGET  # ten are not enough
    needed = pairs_needed(interval, TARGET)
    assert yuen_half(needed, variance) <= math.log1p(TARGET) < yuen_half(needed - 1, variance)
    assert needed == 26


def test_the_pairs_needed_for_an_interval_already_narrow_enough_are_those_it_has():
    interval = speedup_interval([2.0] * 7)
    assert interval.half_width == 0.0
    assert pairs_needed(interval, TARGET) == 7


def test_few_pairs_tell_nothing_but_the_first_real_interval_and_a_limit_bounds_the_rest():
    assert pairs_needed(speedup_interval([1.0, 3.0]), TARGET) == MIN_PAIRS_95
    wild = speedup_interval([0.5, 2.0] * 5)
    assert pairs_needed(wild, TARGET, limit=500) == 500
    assert pairs_needed(wild, TARGET) > 500


# ---- a point gives up once its target is out of reach -------------------------------------------
class FakeClock:
    """Seconds that only move when a scripted forward runs."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def noisy_pair(clock: FakeClock, factors):
    """float32 1 ms per call; autocast 1 ms × the next of `factors` (cycled) per block, so
    each pair's ratio is 1 ÷ that factor. Blocks of one call each."""
    cycle = itertools.cycle(factors)
    factor = [1.0]

    @contextlib.contextmanager
    def next_factor():
        factor[0] = next(cycle)
        yield

    def plain():
        clock.now += 0.001

    def auto():
        clock.now += 0.001 * factor[0]

    return [plain, auto], [None, next_factor]


#: What a run may overrun its limit by: the autocast warm-ups (not counted when its blocks are
#: of two calls) and the round that ended it.
OVERRUN = 0.006


def measure(factors, max_time, give_up_after):
    clock = FakeClock()
    modes, contexts = noisy_pair(clock, factors)
    result = timing.measure_paired(
        modes,
        0.002,  # the adaptive minimum per mode
        block_contexts=contexts,
        max_time=max_time,
        target=TARGET,
        clock=clock,
        give_up_after=give_up_after,
    )
    return result, clock.now


#: Pairs spread about ±5% (the log ratios' winsorized sd about 4%): ±3% needs some 25 pairs.
SPREAD = (0.9, 1.1, 1.0, 0.95, 1.05)


def test_a_point_whose_target_is_in_reach_goes_past_its_even_share_to_reach_it():
    result, seconds = measure(SPREAD, max_time=0.5, give_up_after=0.01)
    assert result.stopped == "precise"
    assert result.interval.half_width <= TARGET and result.interval.level == LEVEL
    assert seconds > 2 * 0.01  # past its even share: the pairs it needed fitted in max_time
    assert seconds < 2 * 0.5 / 4  # and nowhere near max_time


def test_a_point_whose_target_is_out_of_reach_stops_at_its_even_share():
    # The same pairs with a cap too small for the ~25 pairs ±3% needs (2 ms each): it stops
    # once the modes have used their even share, not at the cap.
    result, seconds = measure(SPREAD, max_time=0.02, give_up_after=0.01)
    assert result.stopped == "max_time"
    assert result.interval.half_width > TARGET
    assert 2 * 0.01 <= seconds <= 2 * 0.01 + OVERRUN  # its share, not the 2 × 0.02 of its cap
    # Pairs alternating 1.33 and 0.8 never get within ±3%: out of reach even with a cap of
    # 1 s per mode. Its share was spent before its sixth pair (the fewest an interval is made
    # of, so the first the projection reads): it stops there.
    result, seconds = measure((0.75, 1.25), max_time=1.0, give_up_after=0.01)
    assert result.stopped == "max_time"
    assert result.interval.pairs == MIN_PAIRS_95
    assert seconds < 0.05


def test_without_give_up_after_a_point_out_of_reach_runs_to_its_cap():
    result, seconds = measure((0.75, 1.25), max_time=0.05, give_up_after=None)
    assert result.stopped == "max_time"
    assert 2 * 0.05 <= seconds <= 2 * 0.05 + OVERRUN


# ---- the sweep's budget ------------------------------------------------------------------------
def test_a_point_may_use_its_own_budget_and_borrow_within_the_adaptive_budget():
    budget = SweepBudget(12, 0.5)
    assert budget.total == pytest.approx(12 * 0.5 * ADAPTIVE_BUDGET) == 2.7  # of the fixed 6 s
    first = budget.next_point()
    assert first.cap == pytest.approx(0.5)  # its own budget: nothing was left unspent yet
    assert first.fair == pytest.approx(2.7 / 12)
    budget.spend(0.05)
    for _ in range(9):  # ten cheap points, precise at once
        budget.next_point()
        budget.spend(0.05)
    eleventh = budget.next_point()
    # 4.5 s left unspent of their own budgets, but the sweep may use 2.7 s in all.
    assert eleventh.cap == pytest.approx(0.5 + (2.7 - 0.5 - 0.5))
    assert eleventh.fair == pytest.approx((2.7 - 0.5) / 2)
    budget.spend(1.0)
    last = budget.next_point()
    assert last.cap == last.fair == pytest.approx(2.7 - 1.5)  # all that is left


def test_every_point_keeps_its_own_budget_when_the_adaptive_one_is_spent():
    budget = SweepBudget(3, 0.5)
    budget.next_point()
    budget.spend(5.0)  # far over: a point ran long
    allowance = budget.next_point()
    assert allowance.cap == pytest.approx(0.5)  # as in a fixed sweep
    assert allowance.fair == 0.0  # and it gives up as soon as its target is out of reach
