"""Axis ticks for a chart with one slot per layer, readable from 3 layers to dozens.

With few layers every slot is named. With many (a transformer without its fast path records
each encoder layer and the modules inside it), naming every slot would overprint: then only
top-level layers are named ('encoder3', not 'encoder3.linear1') and, should those still be too
many, every k-th of them. A model whose every layer is nested (your own model's rows at some
depth: 'resnet.encoder.stages.0.layers.1') is labelled by the end of each path ('layers.1'),
as many as fit. Every slot keeps its hover tooltip with the full name.
"""

from __future__ import annotations

import math

#: Names that fit side by side on a 1280-pixel-wide window.
MAX_NAMED = 16
#: Characters of labels that fit side by side there (about 8 per short name).
LABEL_CHARS = 8 * MAX_NAMED


def short_name(name: str) -> str:
    """The end of a module path: 'convolution', or 'layers.1' when the end is an index."""
    parts = name.split(".")
    if len(parts) > 1 and (parts[-1].isdigit() or len(parts[-1]) < 3):
        return ".".join(parts[-2:])
    return parts[-1]


def layer_ticks(names: list[str], max_named: int = MAX_NAMED) -> list[tuple[int, str]]:
    """(slot, label) pairs for the bottom axis."""
    if len(names) <= max_named and all("." not in n for n in names):
        return list(enumerate(names))
    if len(names) <= max_named and sum(len(n) + 2 for n in names) <= LABEL_CHARS:
        return list(enumerate(names))
    top = [(i, n) for i, n in enumerate(names) if "." not in n]
    if not top:
        return _short_ticks(names, max_named)
    candidates = top
    # Named slots at least this far apart, so neighbours ('pool', 'fc') never overprint.
    gap = math.ceil(len(names) / max_named)
    ticks: list[tuple[int, str]] = []
    for slot, name in candidates:
        if not ticks or slot - ticks[-1][0] >= gap:
            ticks.append((slot, name))
    return ticks


def _short_ticks(names: list[str], max_named: int) -> list[tuple[int, str]]:
    """Every k-th slot labelled by its short name, k chosen so the labels fit."""
    labels = [short_name(n) for n in names]
    longest = max(len(label) for label in labels) + 2
    fit = max(2, min(max_named, LABEL_CHARS // longest))
    gap = math.ceil(len(names) / fit)
    return [(slot, labels[slot]) for slot in range(0, len(names), gap)]
