"""Tick labels for log-scaled chart axes: plain numbers ("0.05", "64", "2048"), never 10^x.

pyqtgraph's log mode labels decades as powers of ten and crowds the minor labels; people read
"batch 64" and "0.2 ms" more easily. Positions are log10(value), as pyqtgraph's log mode uses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Tick = tuple[float, str]
_STEPS = ((1,), (1, 5), (1, 2, 5))


def number(value: float) -> str:
    """Compact and exact enough for a tick: 0.05, 0.2, 3, 64, 2048, 10k, 1M."""
    if value >= 1e6 and value % 1e6 == 0:
        return f"{value / 1e6:g}M"
    if value >= 1e4 and value % 1e3 == 0:
        return f"{value / 1e3:g}k"
    if value >= 1:
        return f"{value:.0f}" if value == round(value) else f"{value:.3g}"
    return f"{value:.2g}"


def decade_ticks(low: float, high: float, max_ticks: int = 8) -> list[Tick]:
    """1-2-5 ticks covering [low, high] (both > 0), thinned to at most `max_ticks`."""
    if not (low > 0 and high > 0):
        return []
    low, high = min(low, high), max(low, high)
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    candidates: list[list[float]] = []
    for steps in reversed(_STEPS):
        values = [
            m * 10.0**e for e in range(first, last + 1) for m in steps if low <= m * 10.0**e <= high
        ]
        candidates.append(values)
    chosen = candidates[-1]
    for values in candidates:
        if 2 <= len(values) <= max_ticks:
            chosen = values
            break
    if len(chosen) > max_ticks:
        step = math.ceil(len(chosen) / max_ticks)
        chosen = chosen[::step]
    if len(chosen) < 2:  # a narrow range: label its ends
        chosen = sorted({low, high})
    return [(math.log10(v), number(v)) for v in chosen]


def value_ticks(values: Sequence[float], max_ticks: int = 12) -> list[Tick]:
    """Ticks at the swept values themselves; every k-th one, counted back from the largest
    (always labelled), when there are more than `max_ticks`."""
    ordered = sorted({float(v) for v in values if v > 0})
    step = max(1, math.ceil(len(ordered) / max_ticks))
    shown = ordered[::-1][::step][::-1]
    return [(math.log10(v), number(v)) for v in shown]


def log_range(
    values: Sequence[float], pad: float = 0.06, min_pad: float = 0.15
) -> tuple[float, float]:
    """The log10 view range that shows every value with a little room at both ends."""
    lo, hi = math.log10(min(values)), math.log10(max(values))
    margin = max((hi - lo) * pad, min_pad)
    return lo - margin, hi + margin
