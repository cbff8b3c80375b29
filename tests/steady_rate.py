"""A fixed op rate for tests of what the time guard decides, so machine load cannot change it.

The guard forecasts a forward from rates it calibrates by timing ops (guards.calibrated_rate).
A test of the guard's logic (what it refuses, where, with which figure in the message) sets
every op's rate here instead: the forecast is then the forward's FLOPs ÷ `flops_per_second`,
the same on an idle machine or a busy one. The calibration itself is tested live in
test_guards.py, asserting only what load cannot change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from autocast_explorer.core.experiment import guards

#: FLOP/s of every op: slower than one core of any CPU the program runs on (a 2013 laptop core
#: reaches ~10 GFLOP/s in float32), so what passes here passes on a real machine.
RATE = 1e9

#: What a fixed rate was asked for: (op kind, size class, dtype name, threads).
RateCall = tuple[str, tuple[int, ...], str, int]


@contextmanager
def steady_rates(flops_per_second: float = RATE) -> Iterator[list[RateCall]]:
    """Every op runs at `flops_per_second` inside; yields the calibrations asked for."""
    calls: list[RateCall] = []

    def rate(kind: str, shape: tuple[int, ...], dtype_name: str, threads: int) -> float:
        calls.append((kind, shape, dtype_name, threads))
        return flops_per_second

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guards, "calibrated_rate", rate)
        yield calls
