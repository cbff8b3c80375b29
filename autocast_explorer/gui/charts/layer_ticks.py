"""Axis ticks for a chart with one slot per layer, readable from 3 layers to dozens.

With few layers every slot is named. With many (a transformer without its fast path records
each encoder layer and the modules inside it), naming every slot would overprint: then only
top-level layers are named ('encoder3', not 'encoder3.linear1') and, should those still be too
many, every k-th of them. Every slot keeps its hover tooltip with the full name.
"""

from __future__ import annotations

import math

#: Names that fit side by side on a 1280-pixel-wide window.
MAX_NAMED = 16


def layer_ticks(names: list[str], max_named: int = MAX_NAMED) -> list[tuple[int, str]]:
    """(slot, label) pairs for the bottom axis."""
    if len(names) <= max_named:
        return list(enumerate(names))
    top = [(i, n) for i, n in enumerate(names) if "." not in n]
    candidates = top if top else list(enumerate(names))
    # Named slots at least this far apart, so neighbours ('pool', 'fc') never overprint.
    gap = math.ceil(len(names) / max_named)
    ticks: list[tuple[int, str]] = []
    for slot, name in candidates:
        if not ticks or slot - ticks[-1][0] >= gap:
            ticks.append((slot, name))
    return ticks
