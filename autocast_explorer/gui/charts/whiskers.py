"""Reading back the interval whiskers a chart drew (pyqtgraph ErrorBarItem), for tests."""

from __future__ import annotations

import pyqtgraph as pg


def whisker_ends(item: pg.ErrorBarItem, log_x: bool = False) -> list[tuple[float, float, float]]:
    """(x, low, high) of each whisker, from the item's own data; x un-logged when `log_x`."""
    x, y = item.opts.get("x"), item.opts.get("y")
    if x is None or y is None or len(x) == 0:
        return []
    top, bottom = item.opts["top"], item.opts["bottom"]
    return [
        (float(10**v if log_x else v), float(s - b), float(s + t))
        for v, s, t, b in zip(x, y, top, bottom, strict=True)
    ]
