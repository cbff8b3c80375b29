"""Bars of a run or route that could not tell which mode was faster ("too noisy to tell",
"can't tell"): hatched, drawn as the measurements they are and not as a result, with why in the
chart's tooltip. One helper so the Overview's latency chart, Compare, Routes and the sweep
heatmap draw them alike (core's speed_words.untold_words says why).
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

#: The fill of a bar (or a heatmap cell) whose call states no figure.
HATCH = Qt.BrushStyle.BDiagPattern


def bar_brush(color: str, untold: bool = False) -> QBrush:
    """`color` solid, or hatched where the bar's call could not tell."""
    return QBrush(QColor(color), HATCH if untold else Qt.BrushStyle.SolidPattern)


def hatched(brushes: Any) -> list[bool]:
    """For `drawn()`: which of a BarGraphItem's brushes are hatched."""
    return [pg.mkBrush(b).style() != Qt.BrushStyle.SolidPattern for b in brushes or []]


def hatch_note(who: str, why: str) -> str:
    """The tooltip line for hatched bars: 'Hatched: this run was too noisy to tell (…), so the
    bars are not a result.' ('' when `why` is: nothing is hatched)."""
    return f"Hatched: {who} {why}, so the bars are not a result." if why else ""
