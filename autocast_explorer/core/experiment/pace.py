"""The one threshold for "about the same speed", shared by every sentence that compares modes,
and the words for each speed call and how a speed ratio is written (certainty.judge makes
the calls).

Speedups within SAME_SPEED of 1.0 (either way) are called about even: the summary, the lessons,
the placements and the hardware verdict all use it, so no two of them disagree about one run.
Torch- and pydantic-free: the window's lessons and the charts built before the first paint use
it before either is loaded.
"""

from __future__ import annotations

import math

#: Speedups in [1 / SAME_SPEED, SAME_SPEED] are "about the same speed".
SAME_SPEED = 1.05


def pace(speedup: float) -> str:
    """'faster', 'slower', 'same' (within SAME_SPEED) or 'untimed' (NaN)."""
    if speedup != speedup:
        return "untimed"
    if speedup >= SAME_SPEED:
        return "faster"
    if speedup <= 1 / SAME_SPEED:
        return "slower"
    return "same"


#: Each call of `judge` in a few words (tables, route rows).
SPEED_CALL_WORDS: dict[str, str] = {
    "faster": "faster",
    "slower": "slower",
    "same": "about the same",
    "unclear": "can't tell",
    "noisy": "too noisy to tell",
    "untimed": "not timed",
}


def rough_text(times: float) -> str:
    """A factor known only roughly: one decimal below 2 ('1.4'), whole numbers above ('7')."""
    return f"{times:.1f}" if times < 2 else f"{times:.0f}"


def ms_text(value: float) -> str:
    """A latency as sentences print it: '0.0421 ms', '12.3 ms', '6380 ms' (never '6.38e+03')."""
    return f"{value:.3g} ms" if value < 100 else f"{value:.0f} ms"


def ratio_text(value: float, digits: int = 2) -> str:
    """Two decimals, or two significant digits below 0.1 (a ratio of 0.0025 is not 0.00);
    `digits` of either where more are needed."""
    fixed = value >= 0.1 or value == 0 or not math.isfinite(value)
    return f"{value:.{digits}f}" if fixed else f"{value:.{digits}g}"


#: The most digits `bounds_text` gives two bounds to tell them apart.
MAX_BOUND_DIGITS = 6


def bounds_text(low: float, high: float, between: str = "–") -> str:
    """An interval's bounds, 'low–high', as ratio_text writes them, with as many more digits as
    two bounds that differ need not to read alike ('0.998–1.003', never '1.00–1.00')."""
    digits = 2
    while ratio_text(low, digits) == ratio_text(high, digits) and low != high:
        if digits >= MAX_BOUND_DIGITS:
            break
        digits += 1
    return f"{ratio_text(low, digits)}{between}{ratio_text(high, digits)}"
