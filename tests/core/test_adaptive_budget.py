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
from autocast_explorer.core.experiment.timing import TargetBudget
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


def measure(factors, cap, give_up_after, max_time=None):
    """A run with the ±3% target, a budget (`cap`, `give_up_after`; None: no budget) and a
    `max_time` (default: the cap) on the fake clock; with the seconds it took."""
    clock = FakeClock()
    modes, contexts = noisy_pair(clock, factors)
    result = timing.measure_paired(
        modes,
        0.002,  # the adaptive minimum per mode
        block_contexts=contexts,
        max_time=cap if max_time is None else max_time,
        target=TARGET,
        clock=clock,
        budget=None if give_up_after is None else TargetBudget(cap, give_up_after),
    )
    return result, clock.now


#: Pairs spread about ±5% (the log ratios' winsorized sd about 4%): ±3% needs some 25 pairs.
SPREAD = (0.9, 1.1, 1.0, 0.95, 1.05)


def test_a_point_whose_target_is_in_reach_goes_past_its_even_share_to_reach_it():
    result, seconds = measure(SPREAD, cap=0.5, give_up_after=0.01)
    assert result.stopped == "precise"
    assert result.interval.half_width <= TARGET and result.interval.level == LEVEL
    assert seconds > 2 * 0.01  # past its even share: the pairs it needed fitted in its cap
    assert seconds < 2 * 0.5 / 4  # and nowhere near the cap


def test_a_point_whose_target_is_out_of_reach_stops_at_its_even_share():
    # The same pairs with a cap too small for the ~25 pairs ±3% needs (2 ms each): it stops
    # once the modes have used their even share, not at the cap.
    result, seconds = measure(SPREAD, cap=0.02, give_up_after=0.01)
    assert result.stopped == "max_time"
    assert result.interval.half_width > TARGET
    assert 2 * 0.01 <= seconds <= 2 * 0.01 + OVERRUN  # its share, not the 2 × 0.02 of its cap
    # Pairs alternating 1.33 and 0.8 never get within ±3%: out of reach even with a cap of
    # 1 s per mode. Its share was spent before its sixth pair (the fewest a 95% interval is
    # made of, so the first the projection reads): it stops there.
    result, seconds = measure((0.75, 1.25), cap=1.0, give_up_after=0.01)
    assert result.stopped == "max_time"
    assert result.interval.pairs == MIN_PAIRS_95
    assert seconds < 0.05


def test_without_a_budget_a_point_out_of_reach_runs_to_its_maximum_time():
    result, seconds = measure((0.75, 1.25), cap=0.05, give_up_after=None)
    assert result.stopped == "max_time"
    assert 2 * 0.05 <= seconds <= 2 * 0.05 + OVERRUN


def test_a_point_without_a_95_percent_interval_goes_past_its_cap_to_get_one():
    # A cap of 4 ms per mode holds about two pairs; the point goes on towards its maximum time
    # (50 ms per mode) until it has its sixth pair, then stops at once: the cap is spent.
    result, seconds = measure(SPREAD, cap=0.004, give_up_after=0.002, max_time=0.05)
    assert result.stopped == "max_time"
    assert result.interval.pairs == MIN_PAIRS_95 and result.interval.level == LEVEL
    assert seconds < 2 * 0.05 / 2


# ---- the sweep's budget ------------------------------------------------------------------------
def test_a_point_may_use_its_own_budget_and_borrow_within_the_adaptive_budget():
    budget = SweepBudget(12, 0.5)
    assert budget.total == pytest.approx(12 * 0.5 * ADAPTIVE_BUDGET) == 2.7  # of the fixed 6 s
    first = budget.next_point()
    assert first.cap == first.limit == pytest.approx(0.5)  # nothing was left unspent yet
    assert first.fair == pytest.approx(2.7 / 12)
    budget.spend(0.05)
    for _ in range(9):  # ten cheap points, precise at once
        budget.next_point()
        budget.spend(0.05)
    eleventh = budget.next_point()
    # 4.5 s left unspent of their own budgets, but the sweep may use 2.7 s in all.
    assert eleventh.cap == eleventh.limit == pytest.approx(0.5 + (2.7 - 0.5 - 0.5))
    assert eleventh.fair == pytest.approx((2.7 - 0.5) / 2)
    budget.spend(1.0)
    last = budget.next_point()
    assert last.cap == last.fair == pytest.approx(2.7 - 1.5)  # all that is left
    # Without a 95% interval it may go on to its own budget and as much again (4 s were left
    # unspent), as every point could before there was a sweep budget; here its cap is more.
    assert last.limit == pytest.approx(max(2 * 0.5, 2.7 - 1.5))


def test_every_point_keeps_its_own_budget_when_the_adaptive_one_is_spent():
    budget = SweepBudget(3, 0.5)
    budget.next_point()
    budget.spend(5.0)  # far over: a point ran long, nothing is left unspent
    allowance = budget.next_point()
    assert allowance.cap == allowance.limit == pytest.approx(0.5)  # as in a fixed sweep
    assert allowance.fair == 0.0  # and it gives up as soon as its target is out of reach


# ---- a whole sweep, scripted as on an AVX2-only CPU ---------------------------------------------
class SlowingSweep:
    """What the protocol sees of a 12-point batch sweep on an AVX2-only CPU, scripted: float32
    calls from 0.03 ms, 1.8× slower at each point (20 ms at the last); autocast 3× slower than
    float32 (bfloat16 without native support); each call off by a lognormal factor that
    spreads 4% at the small points and 5–7% at the three largest. The forwards are not run."""

    SPREADS = (0.04,) * 9 + (0.05, 0.06, 0.07)

    def __init__(self, seed: int = 0) -> None:
        import random

        self.random = random.Random(seed)
        self.now = 0.0
        self.point = 0

    def per_call(self, mode: int) -> float:
        base = 0.00003 * 1.8**self.point * (3.0 if mode else 1.0)
        return base * self.random.lognormvariate(0.0, self.SPREADS[self.point])

    def time_block(self, _fn, calls: int, _clock, mode: int) -> float:
        seconds = sum(self.per_call(mode) for _ in range(calls))
        self.now += seconds
        return seconds / calls

    def clock(self) -> float:
        return self.now

    def cold_call_ms(self, _fn) -> float:
        seconds = 3 * self.per_call(0)
        self.now += seconds
        return seconds * 1e3

    def next_point(self, _point) -> None:
        self.point += 1


def scripted_sweep(monkeypatch, adaptive: bool, seed: int):
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.hardware import load
    from autocast_explorer.core.sweeps import runner

    script = SlowingSweep(seed)
    monkeypatch.setattr(timing, "default_block_timer", script.time_block)
    monkeypatch.setattr(timing, "default_clock", script.clock)
    monkeypatch.setattr(runner, "cold_call_ms", script.cold_call_ms)
    monkeypatch.setattr(load, "observed", lambda r: r.model_copy(update={"other_cpu_s": 0.0}))
    config = ExperimentConfig(widths=(32, 16, 16, 4), batch=4, min_time=0.5)
    result = runner.run_sweep(
        config,
        "batch",
        range(1, 13),
        probe_onednn=False,
        adaptive=adaptive,
        on_point=script.next_point,
    )
    return result, script.now


def test_a_scripted_avx2_sweep_gives_up_where_it_cannot_help(monkeypatch):
    # The allowance per point this replaced (its own budget plus up to one more) took 0.64 of
    # the fixed sweep's time on this script: batch 11 (6% spread) spent its whole 1 s to end at
    # ±9.4%, and the last point ran out of time at 4 pairs (±9.0%).
    _, fixed_s = scripted_sweep(monkeypatch, adaptive=False, seed=1)
    result, adaptive_s = scripted_sweep(monkeypatch, adaptive=True, seed=1)
    assert adaptive_s / fixed_s == pytest.approx(0.57, abs=0.005)
    stopped = [p.evidence.stopped for p in result.points]
    assert stopped == ["precise"] * 10 + ["max_time"] * 2
    for p in result.points[:10]:
        assert p.interval.half_width <= TARGET and p.interval.level == LEVEL
    # Batch 11 gave up at its first 95% interval: ±3% was out of its reach.
    eleventh = result.points[10].interval
    assert eleventh.pairs == MIN_PAIRS_95 and eleventh.half_width > TARGET
    # The last one, whose single calls are slowest, had no 95% interval yet: it went on to its
    # own budget and as much again, as before (5 pairs: the cold calls and warm-ups of 60 ms
    # forwards take half of that).
    assert result.points[11].interval.pairs == 5


def test_past_the_adaptive_budget_a_point_without_an_interval_may_still_borrow():
    budget = SweepBudget(12, 0.5)
    for _ in range(11):  # every point took half its budget: 2.75 s, over the 2.7 s
        budget.next_point()
        budget.spend(0.25)
    last = budget.next_point()
    assert last.cap == pytest.approx(0.5) and last.fair == 0.0
    assert last.limit == pytest.approx(0.5 + 0.5)  # 2.75 s were left unspent: one more budget
