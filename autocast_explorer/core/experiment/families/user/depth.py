"""Which modules of a big model become rows: the modules at one depth of the module tree.

A row at depth N stands for everything inside it (its input and output dtype, its error); a
module above N with no recorded module inside it down to N is a row too, and so is one below N
when nothing on its path down to N was recorded (BERT's `encoder.layer` is a ModuleList, never
called: at depth 2 its blocks `encoder.layer.0`… are the rows), so nothing is lost and every row
is a module's own input and output.
At the deepest depth the rows are the leaf modules. The default depth is the deepest one that
keeps at most DEFAULT_MAX_ROWS rows, so resnet50 (≈ 170 modules) reads as its stages.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_MAX_ROWS = 40


def depth(name: str) -> int:
    return name.count(".") + 1


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def shown_names(names: Sequence[str], at: int) -> set[str]:
    """The names that are rows at depth `at` (see the module's docstring)."""
    recorded = set(names)
    kept: set[str] = set()
    for name in sorted(recorded, key=depth):
        if any(a in kept for a in _ancestors(name)):
            continue
        if depth(name) >= at:
            kept.add(name)
            continue
        prefix = name + "."
        if not any(m.startswith(prefix) and depth(m) <= at for m in recorded):
            kept.add(name)
    return kept


def max_depth(names: Sequence[str]) -> int:
    return max((depth(n) for n in names), default=1)


def default_depth(names: Sequence[str], max_rows: int = DEFAULT_MAX_ROWS) -> int:
    """The deepest depth whose rows (counting repeated calls) number at most `max_rows`; 1 when
    even the top level has more."""
    for at in range(max_depth(names), 0, -1):
        shown = shown_names(names, at)
        if sum(n in shown for n in names) <= max_rows:
            return at
    return 1
