"""The timing protocol on a simulated clock: block sizes, budgets and reused warm-ups."""

import pytest

from autocast_explorer.core.experiment import timing


@pytest.fixture
def clock(monkeypatch):
    """A clock that only moves when a simulated forward runs (deterministic, no sleeping)."""
    now = [0.0]
    monkeypatch.setattr(timing.time, "perf_counter", lambda: now[0])
    return now


def forward(clock, seconds, calls):
    def fn():
        calls.append(seconds)
        clock[0] += seconds

    return fn


def test_a_slow_mode_reuses_its_warm_ups_and_blocks_are_balanced(clock):
    # An AVX2 host: bfloat16 forwards 20× slower than float32 (1 ms vs 20 ms).
    fast_calls, slow_calls = [], []
    fast = forward(clock, 0.001, fast_calls)
    slow = forward(clock, 0.020, slow_calls)
    budget = 0.1
    plain, auto = timing.measure_alternating([fast, slow], budget, cold_ms=[1.0, 20.0])
    assert auto.block_size == 1
    assert plain.block_size == 20  # as long as one slow call, so both fill budgets together
    assert auto.times_ms == pytest.approx((20.0,) * auto.samples)
    # Warm-ups were kept as samples: every slow call after the cold one is a sample.
    assert len(slow_calls) == auto.samples
    assert auto.samples >= timing.WARMUP_CALLS
    # Neither mode ran far past its budget (the cold call counts toward it).
    assert sum(slow_calls) + 0.020 <= budget + 0.020 + 1e-9  # at most one call past it
    assert sum(fast_calls) <= budget + 0.020 + 0.05 * budget + 1e-9  # one block, warm-up


def test_fast_modes_are_timed_in_blocks_for_their_budget(clock):
    calls_a, calls_b = [], []
    a = forward(clock, 0.0001, calls_a)
    b = forward(clock, 0.0002, calls_b)
    first, second = timing.measure_alternating([a, b], 0.2)
    assert (first.block_size, second.block_size) == (100, 50)  # 10 ms blocks = 0.2 s / 20
    assert first.samples >= timing.MIN_BLOCKS and second.samples >= timing.MIN_BLOCKS
    for stats in (first, second):
        timed = sum(stats.times_ms) * stats.block_size / 1e3 + stats.cold_ms / 1e3
        assert timed >= 0.2
    assert first.median_ms == pytest.approx(0.1) and second.median_ms == pytest.approx(0.2)
