"""Where a speedup curve crosses 1.0: the size at which autocast starts (or stops) paying.

Sizes are swept on a log scale (1, 8, 64 …), so between two measured points the curve is taken
as straight in log(x): a crossing halfway between batch 64 and 256 is reported at 128, not 160.
Pure functions, no torch: the window calls them on partial sweeps as points arrive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

BREAK_EVEN = 1.0


@dataclass(frozen=True)
class Crossing:
    """One place where speedup − 1 changes sign.

    `direction` is "up" when autocast loses below `value` and wins above it, "down" otherwise.
    """

    value: float
    direction: str

    @property
    def rising(self) -> bool:
        return self.direction == "up"


def _clean(values: Sequence[float], speedups: Sequence[float]) -> list[tuple[float, float]]:
    if len(values) != len(speedups):
        raise ValueError(f"{len(values)} values but {len(speedups)} speedups")
    pairs = []
    for x, s in zip(values, speedups, strict=True):
        if not x > 0 or math.isinf(x):
            raise ValueError(f"swept values must be positive and finite (got {x!r})")
        if math.isfinite(s):  # an unmeasured (NaN) point is skipped, not guessed
            pairs.append((float(x), float(s)))
    pairs.sort()
    return pairs


def find_crossings(
    values: Sequence[float], speedups: Sequence[float], level: float = BREAK_EVEN
) -> list[Crossing]:
    """Every crossing of `level`, in increasing x.

    Between neighbours of opposite sign, log(x) is interpolated linearly. A point exactly at
    `level` is where the crossing is reported when the curve passes through it (the signs
    before and after differ); touching `level` and turning back, or starting or ending on it,
    is not a crossing. Points whose speedup is NaN are ignored.
    """
    pairs = _clean(values, speedups)
    crossings: list[Crossing] = []
    prev_x: float | None = None
    prev_d = 0.0
    exact_x: float | None = None  # first x of a run of points exactly at `level`
    for x, s in pairs:
        d = s - level
        if d == 0:
            if exact_x is None:
                exact_x = x
            continue
        if prev_x is not None and (prev_d < 0) != (d < 0):
            if exact_x is not None:
                at = exact_x
            else:
                t = prev_d / (prev_d - d)
                at = math.exp(math.log(prev_x) + t * (math.log(x) - math.log(prev_x)))
            crossings.append(Crossing(at, "up" if d > 0 else "down"))
        prev_x, prev_d, exact_x = x, d, None
    return crossings


def crossovers(
    values: Sequence[float], speedups: Sequence[float], level: float = BREAK_EVEN
) -> list[float]:
    """The x of every crossing of 1.0 (see `find_crossings`); empty when it never crosses."""
    return [c.value for c in find_crossings(values, speedups, level)]


def format_value(value: float) -> str:
    """A crossover for a sentence: whole numbers above 10, two significant digits below."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"
