"""StaticChart: the set-up every read-only chart shares, in one place.

A base class rather than a helper in style.py because the set-up is not only styling: it also
removes PlotWidget's instance copy of PlotItem.clear (so a subclass's own clear() is the one
called) and names the widget; a subclass just passes what varies and adds its items.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Slot

from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.fit_title import wrap_centred

#: The plot layout row under the bottom axis (rows: title, top axis, plot, bottom axis), where
#: a legend never covers what the plot draws.
LEGEND_ROW = 4


class StaticChart(pg.PlotWidget):
    """A PlotWidget with no menu, buttons or mouse interaction, styled like every chart.

    name, tooltip, minimum (width, height): the widget's objectName, tooltip and minimum size.
    left, bottom: axis captions (None: none set here). grid: (x, y) grid lines, None for none.
    log: (x, y) log axes, None for linear. grid_behind: put the left axis, which draws the
    grid, below the view box so the grid runs behind the items. tick_pt: tick font size.
    label_pt: axis caption font size (None: left at pyqtgraph's default). tick_length: set on
    both axes when given. hover: the tooltip follows the mouse, from `tooltip_at(x, y)`
    (data coordinates), falling back to `tooltip` off the items.
    """

    def __init__(
        self,
        parent: Any = None,
        *,
        name: str,
        tooltip: str,
        minimum: tuple[int, int],
        left: str | None = None,
        bottom: str | None = None,
        grid: tuple[bool, bool] | None = None,
        log: tuple[bool, bool] | None = None,
        grid_behind: bool = False,
        tick_pt: int = style.CHART_FONT_PT,
        label_pt: int | None = 10,
        tick_length: int | None = None,
        hover: bool = False,
    ) -> None:
        super().__init__(parent)
        # PlotWidget copies PlotItem.clear onto the instance (it would remove every item);
        # drop that copy so clear() is the subclass's own.
        del self.clear
        self.setObjectName(name)
        self.setToolTip(tooltip)
        self._base_tooltip = tooltip
        self.setMinimumSize(*minimum)
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        if log is not None:
            plot.setLogMode(x=log[0], y=log[1])
        if grid is not None:
            plot.showGrid(x=grid[0], y=grid[1], alpha=style.GRID_ALPHA)
        if grid_behind:
            # The left axis draws the grid; below the view box it runs behind the items.
            plot.getAxis("left").setZValue(-200)
        if left is not None:
            plot.setLabel("left", left)
        if bottom is not None:
            plot.setLabel("bottom", bottom)
        for axis_name in ("left", "bottom"):
            axis = plot.getAxis(axis_name)
            axis.setTickFont(style.chart_font(tick_pt))
            if label_pt is not None:
                axis.label.setFont(style.chart_font(label_pt))
            if tick_length is not None:
                axis.setStyle(tickLength=tick_length)
            axis.enableAutoSIPrefix(False)
        style.fit_tick_labels(plot)
        if hover:
            self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        # Whenever the plot area changes size (the widget's resize, a title that wraps, axes at
        # a new text scale), what is fitted to it is fitted again.
        plot.getViewBox().sigResized.connect(self._on_view_resized)

    #: Room (px) a centred hint keeps from the plot's edges.
    HINT_MARGIN = 16

    def set_hint(self, text: str) -> None:
        """Show `text` as the chart's centred hint ('' hides it), wrapped to the plot."""
        self._hint.setText(text)
        self.fit_hint()

    def fit_hint(self) -> None:
        """Wrap the chart's centred hint (`self._hint`, "Press Run (F5)…") to its plot's width:
        at large text, or in a narrow window, a one-line hint was cut at both edges."""
        hint = getattr(self, "_hint", None)
        if not isinstance(hint, pg.TextItem):
            return
        room = self.getPlotItem().getViewBox().width() - 2 * self.HINT_MARGIN
        text = hint.textItem
        text.setTextWidth(-1)
        if room > 40 and text.boundingRect().width() > room:
            wrap_centred(text, room)
        hint.updateTextPos()

    def fit_text(self) -> None:
        """Fit what this chart draws in words to its size: after a resize, and after
        presentation mode rescaled its text. Subclasses add their own (cell labels)."""
        self.fit_hint()

    @Slot(object)
    def _on_view_resized(self, _view: object) -> None:
        if self.getPlotItem() is not None:  # None while the widget is torn down
            self.fit_text()  # each part checks it exists: the view resizes during __init__

    def tooltip_at(self, x: float, y: float) -> str | None:
        """The tooltip for the item under data point (x, y); None for the chart's own."""
        return None

    @Slot(object)
    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        view = self.getPlotItem().getViewBox()
        tip = None
        if view.sceneBoundingRect().contains(scene_pos):
            point = view.mapSceneToView(scene_pos)
            tip = self.tooltip_at(point.x(), point.y())
        self.setToolTip(tip or self._base_tooltip)
