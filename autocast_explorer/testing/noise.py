"""Noise on purpose: what a live run's timing and load readings see, decided by the test.

The call a run makes (faster, slower, about the same, can't tell, too noisy) depends on its
paired blocks and on how busy the machine was; a test that asserts one of them must not depend
on the machine it runs on. `timing_noise` (the fixture) swaps the protocol's seams for the rest
of the test: `timing.default_block_timer` (what each block of each mode takes: the forwards
still run for real, as often as the protocol asks), `timing.default_clock` (a clock that moves
with those scripted blocks, so the warm-up's and the budget's time is theirs too) and
`load.observed` (what the load meter reports for the span of the timing). Every run, sweep
point and route timed in the test then reads them, on the worker thread as on the test's own.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

    from autocast_explorer.core.hardware.load import MachineLoad

#: Seconds per call of a float32 block; the lower side's is this ÷ the speedup asked for.
BASE_SECONDS = 0.001
#: Each block's time varies by up to this share either way when clear (no stall: < 2×).
CLEAR_SPREAD = 0.01
#: … and by this much when noisy: per-call times from 0.2 to 1.8 ms, pairs' ratios all over.
NOISY_SPREAD = 0.8


@dataclass
class TimingNoise:
    """What the timing of the runs in a test sees. Call one of `clear`, `busy` or `noisy`
    before the run; the last call holds until the test ends (or `real()` undoes it)."""

    monkeypatch: pytest.MonkeyPatch
    seed: int = 0

    def clear(self, speedup: float = 1.0) -> None:
        """Steady blocks, the lower side `speedup`× faster (below 1: slower), on a quiet
        machine: the call is faster, slower or about the same, by `speedup`."""
        self._install(speedup, CLEAR_SPREAD, other_cores=0.0)

    def busy(self, speedup: float = 1.0, other_cores: float | None = None) -> None:
        """Steady blocks as `clear`, while other programs use `other_cores` cores (None: every
        core the machine has, so any thread count is disturbed): the load rule applies (a
        direction only where the whole interval clears the bias bound, its factor then rough;
        else too noisy)."""
        self._install(speedup, CLEAR_SPREAD, other_cores=other_cores)

    def noisy(self) -> None:
        """Blocks whose times vary from 0.2× to 1.8× at random on a quiet machine: the
        interval is far too wide to tell, the call is too noisy."""
        self._install(1.0, NOISY_SPREAD, other_cores=0.0)

    def real(self) -> None:
        """The real timer and load readings again."""
        self.monkeypatch.undo()

    def _install(self, speedup: float, spread: float, other_cores: float | None) -> None:
        from autocast_explorer.core.experiment import timing
        from autocast_explorer.core.hardware import load

        script = _Script(speedup, spread, random.Random(self.seed))
        self.monkeypatch.setattr(timing, "default_block_timer", script.time_block)
        self.monkeypatch.setattr(timing, "default_clock", script.clock)
        self.monkeypatch.setattr(load, "observed", _load(other_cores))


class _Script:
    """Scripted block times and the clock that moves with them (worker threads share it)."""

    def __init__(self, speedup: float, spread: float, jitter: random.Random) -> None:
        self._speedup = speedup
        self._spread = spread
        self._jitter = jitter
        self._lock = threading.Lock()
        self._now = 0.0

    def time_block(self, fn: Callable[[], object], calls: int, _clock: object, mode: int) -> float:
        """Runs the block's calls for real; reports the scripted seconds per call."""
        for _ in range(calls):
            fn()
        with self._lock:
            factor = self._jitter.uniform(1 - self._spread, 1 + self._spread)
            per_call = BASE_SECONDS * factor / (self._speedup if mode > 0 else 1.0)
            self._now += per_call * calls
        return per_call

    def clock(self) -> float:
        """Seconds: the scripted blocks so far, plus one float32 call per reading (a cold call
        then takes about that)."""
        with self._lock:
            self._now += BASE_SECONDS
            return self._now


def _load(other_cores: float | None) -> Callable[[MachineLoad], MachineLoad]:
    """The load meter's report: what it read, with other programs using `other_cores` (None:
    all of the machine's)."""

    def observed(reading: MachineLoad) -> MachineLoad:
        cores = reading.cores if other_cores is None else other_cores
        return reading.model_copy(update={"other_cpu_s": cores * reading.wall_s})

    return observed
