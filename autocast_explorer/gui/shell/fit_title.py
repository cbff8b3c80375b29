"""A plot title that shrinks to fit its plot instead of widening it.

pyqtgraph's LabelItem asks for its text's full width as its minimum on every resize, so a title
wider than the chart (large text in presentation mode, a narrow window) pushes the plot's right
edge out of its widget, where it is cut off with the statistics drawn there. FitLabel has no
minimum width and scales its text down to the width it gets.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt


class FitLabel(pg.LabelItem):
    """A LabelItem whose text is scaled down (never up) to the width the layout gives it."""

    def updateMin(self) -> None:
        super().updateMin()
        height = self.itemRect().height()
        self.setMinimumWidth(0)
        self._sizeHint[Qt.SizeHint.MinimumSize] = (0, height)
        self._sizeHint[Qt.SizeHint.PreferredSize] = (0, height)

    def resizeEvent(self, ev: object) -> None:
        natural = self.item.boundingRect().width()
        available = self.width()
        fit = min(1.0, available / natural) if natural > 0 and available > 1 else 1.0
        self.item.setScale(fit)
        super().resizeEvent(ev)

    def fit(self) -> float:
        """The factor the text is drawn at (1.0: it fits)."""
        return self.item.scale()


def install(plot: pg.PlotItem) -> FitLabel:
    """Replace `plot`'s title label by a FitLabel (once); returns the title label."""
    label = plot.titleLabel
    if isinstance(label, FitLabel):
        return label
    fitted = FitLabel("", size=label.opts.get("size", "11pt"), parent=plot)
    plot.layout.removeItem(label)
    label.setParentItem(None)
    if label.scene() is not None:
        label.scene().removeItem(label)
    plot.layout.addItem(fitted, 0, 1)
    fitted.setVisible(label.isVisible())
    plot.titleLabel = fitted
    return fitted
