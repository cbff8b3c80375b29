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


@dataclass(frozen=True)
class CrossingInterval:
    """A crossing of 1.0 with the range the points' speedup intervals allow for it.

    `low`/`high` are None where that side is open: the band stays across 1.0 to the end of the
    values swept. Built from pointwise intervals, so it is a band, not a joint 95% interval.
    """

    value: float
    direction: str
    low: float | None
    high: float | None


def crossing_intervals(
    values: Sequence[float],
    speedups: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    level: float = BREAK_EVEN,
) -> list[CrossingInterval]:
    """Each crossing of the speedups with where the lower and upper band edges cross 1.0.

    A rising crossing (autocast wins above it) can lie no lower than where the band's upper
    edge rises through 1.0, and no higher than where its lower edge does; a falling one the
    other way round. `lows`/`highs` hold each point's interval (NaN: none, the speedup is used).
    """
    lows = [lo if math.isfinite(lo) else s for lo, s in zip(lows, speedups, strict=True)]
    highs = [hi if math.isfinite(hi) else s for hi, s in zip(highs, speedups, strict=True)]
    out = []
    upper = find_crossings(values, highs, level)
    lower = find_crossings(values, lows, level)
    for c in find_crossings(values, speedups, level):
        early, late = (upper, lower) if c.rising else (lower, upper)
        before = [x.value for x in early if x.direction == c.direction and x.value <= c.value]
        after = [x.value for x in late if x.direction == c.direction and x.value >= c.value]
        out.append(
            CrossingInterval(
                c.value, c.direction, max(before) if before else None, min(after) if after else None
            )
        )
    return out


def interval_words(found: CrossingInterval, param: str) -> str:
    """'between batch 120 and 210', 'at or below batch 210', or 'anywhere in the range swept'."""
    low = format_value(found.low) if found.low is not None else None
    high = format_value(found.high) if found.high is not None else None
    if low is not None and high is not None:
        return f"between {param} {low} and {high}" if low != high else f"at {param} {low}"
    if high is not None:
        return f"at or below {param} {high}"
    if low is not None:
        return f"at or above {param} {low}"
    return "anywhere in the range swept"


def crossover_sentence(param: str, values: Sequence[float], speedups: Sequence[float]) -> str:
    """'Autocast starts to win above batch ≈ 210 (…)' or why it never crosses. NaN speedups are
    points that could not tell (SweepPoint.told_speedup): nothing is said from them."""
    pairs = [(v, s) for v, s in zip(values, speedups, strict=True) if math.isfinite(s)]
    untold = len(values) - len(pairs)
    if not pairs:
        if untold:
            return "No crossover can be told: no point could tell which mode was faster."
        return "No crossover: nothing was measured."
    found = find_crossings([v for v, _ in pairs], [s for _, s in pairs])
    lo, hi = pairs[0][0], pairs[-1][0]
    span = f"{param} {format_value(lo)} … {format_value(hi)}"
    among = f" (among the {len(pairs)} of {len(values)} points that could tell)" if untold else ""
    if not found:
        side = "above" if all(s >= 1 for _, s in pairs) else "below"
        return f"No crossover{among}: the speedup stays {side} 1.0 from {span}."
    parts = [
        f"{param} ≈ {format_value(c.value)} "
        f"({'autocast starts to win' if c.rising else 'autocast stops winning'})"
        for c in found
    ]
    return f"Crossover{among} (interpolated on a log scale): " + "; ".join(parts) + "."
