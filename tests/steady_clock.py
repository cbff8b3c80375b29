"""A steady fake clock for tests of what a run reports, so machine load cannot change it.

On a busy machine a real run flags stalled blocks and may stop at its time limit with fewer
than two paired rounds, hence no interval. A test of how a run's interval is attached, carried,
written or drawn times its run on this clock instead: each reading is one step after the last
(steps vary ±10% from a fixed seed, so the pair ratios differ and the median ratio is not the
ratio of the medians), every block is kept and every round pairs, on an idle machine or a busy
one. The forwards still run for real; only the timing protocol reads this clock. The protocol
itself is tested on scripted clocks in test_timing.py and test_certainty.py.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from autocast_explorer.core.experiment import timing

#: One step per reading: a block of one call lasts one step. With a run's min_time of 0.02 s
#: the run keeps about 15 paired rounds.
STEP_SECONDS = 0.001
#: A block over 2× its mode's median is a stall; steps within ±10% never are.
JITTER = 0.1


class SteadyClock:
    """Seconds that advance by about `step` at every reading, never by more than ±`jitter`."""

    def __init__(self, step: float = STEP_SECONDS, jitter: float = JITTER, seed: int = 0) -> None:
        self.now = 0.0
        self._step = step
        self._jitter = jitter
        self._random = random.Random(seed)

    def __call__(self) -> float:
        self.now += self._step * self._random.uniform(1 - self._jitter, 1 + self._jitter)
        return self.now


@contextmanager
def steady_timing(step: float = STEP_SECONDS) -> Iterator[SteadyClock]:
    """Every timing of the runs inside reads a fresh SteadyClock (timing.default_clock)."""
    clock = SteadyClock(step)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timing, "default_clock", clock)
        yield clock


@contextmanager
def clear_timing(speedup: float = 1.0) -> Iterator[None]:
    """The runs inside make a clear call on any machine: the tester's kit's `timing_noise`
    with `clear(speedup)` (scripted block times, a quiet load reading), for module fixtures
    whose tests state the run's figure."""
    from autocast_explorer.testing.noise import TimingNoise

    with pytest.MonkeyPatch.context() as patch:
        TimingNoise(patch).clear(speedup)
        yield
