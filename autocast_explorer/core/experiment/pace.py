"""The one threshold for "about the same speed", shared by every sentence that compares modes.

Speedups within SAME_SPEED of 1.0 (either way) are called about even: the summary, the lessons,
the placements and the hardware verdict all use it, so no two of them disagree about one run.
"""

from __future__ import annotations

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
