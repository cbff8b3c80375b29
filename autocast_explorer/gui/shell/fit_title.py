"""A plot title that shrinks to fit its plot instead of widening it.

pyqtgraph's LabelItem asks for its text's full width as its minimum on every resize, so a title
wider than the chart (large text in presentation mode, a narrow window) pushes the plot's right
edge out of its widget, where it is cut off with the statistics drawn there. FitLabel has no
minimum width and scales its text down to the width it gets, but never below `MIN_FIT`: a
title that would have to shrink more (a long second line at 150% text) wraps instead, and its
row of the plot grows by the extra line.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsTextItem


def wrap_centred(item: QGraphicsTextItem, width: float) -> None:
    """Wrap a chart's text item at `width` px, each line centred (a title, a hint)."""
    option = item.document().defaultTextOption()
    option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    item.document().setDefaultTextOption(option)
    item.setTextWidth(width)


#: The least a title is scaled to fit; narrower than that it wraps (smaller is hard to read).
MIN_FIT = 0.85


class FitLabel(pg.LabelItem):
    """A LabelItem whose text is scaled down (never up, never below MIN_FIT) to the width the
    layout gives it, and wrapped where that is not enough. `row_height` is the plot's title
    row height for the unwrapped title (style.set_title sets it)."""

    row_height: float = 0.0

    def updateMin(self) -> None:
        super().updateMin()
        height = self.itemRect().height()
        self.setMinimumWidth(0)
        self._sizeHint[Qt.SizeHint.MinimumSize] = (0, height)
        self._sizeHint[Qt.SizeHint.PreferredSize] = (0, height)

    def resizeEvent(self, ev: object) -> None:
        self.refit()
        super().resizeEvent(ev)

    def refit(self) -> None:
        """Scale (or wrap) the text to the label's width; the title row follows."""
        self.item.setTextWidth(-1)
        natural = self.item.boundingRect().width()
        available = self.width()
        fit = min(1.0, available / natural) if natural > 0 and available > 1 else 1.0
        if fit < MIN_FIT:
            wrap_centred(self.item, available / MIN_FIT)
            fit = MIN_FIT
        self.item.setScale(fit)
        self._fit_row(self.item.boundingRect().height() * fit)

    def _fit_row(self, text_height: float) -> None:
        """The plot's title row as tall as the (wrapped) title, never less than set_title's."""
        plot = self.parentItem()
        if self.row_height <= 0 or not isinstance(plot, pg.PlotItem):
            return
        height = max(self.row_height, text_height)
        if abs(self.maximumHeight() - height) > 0.5:
            self.setMaximumHeight(height)
            plot.layout.setRowFixedHeight(0, height)

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
