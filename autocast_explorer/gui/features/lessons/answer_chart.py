"""The chart that answers a lesson: which one this window has, and the frame around it.

Apart from the panel because it depends on what the window holds (views are looked up by id,
charts by key, so no other feature is imported) and on following a widget through splitters
and resizes, neither of which is about walking through steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtWidgets import QFrame, QSplitter, QWidget

from autocast_explorer.core.learning.lessons import CHARTS

if TYPE_CHECKING:
    from autocast_explorer.core.learning.lessons import Lesson
    from autocast_explorer.gui.shell.context import AppContext

HIGHLIGHT = "#c2185b"
#: The view that answers a lesson about ops: the op trace of the run on screen.
OPS_VIEW_ID = "optrace"


def chart_target(ctx: AppContext, chart_id: str) -> tuple[str, str, QWidget | None]:
    """(chart id used, the tab to show, the widget to frame); 'ops' falls back to dtype."""
    if chart_id == "ops":
        page = ctx.view(OPS_VIEW_ID)
        if page is not None:
            return "ops", OPS_VIEW_ID, page
        chart_id = "dtype"
    if chart_id == "layers":
        return "layers", "layers", ctx.view("layers")
    view = ctx.view("accuracy")
    if chart_id == "accuracy" and view is not None:
        flips = view.findChild(QWidget, "flipBox")  # the flipped rows answer the question
        return "accuracy", "accuracy", flips if flips is not None else view
    if chart_id == "loss" and ctx.view("training") is not None:
        loss = ctx.chart("loss")
        if loss is not None:
            return "loss", "training", loss
    plot = ctx.chart(chart_id) if chart_id in ("latency", "dtype", "agreement") else None
    if plot is None:
        chart_id, plot = "dtype", ctx.chart("dtype")
    return chart_id, "overview", plot


def chart_title(ctx: AppContext, lesson: Lesson) -> str:
    """What the panel names as the answering chart, saying so when it stands in for another."""
    chart_id, _tab, _target = chart_target(ctx, lesson.chart)
    title = CHARTS[chart_id] + (" chart" if chart_id != "layers" else "")
    if chart_id != lesson.chart:
        title += f" (no {CHARTS[lesson.chart]} view in this window)"
    return title


def frame_parent(target: QWidget) -> QWidget:
    """Where the frame around `target` lives: its nearest ancestor that is no QSplitter (a
    splitter makes every child widget a pane: the frame would be an empty third pane beside the
    loss chart), else `target` itself."""
    parent = target.parentWidget()
    while isinstance(parent, QSplitter):
        parent = parent.parentWidget()
    return parent if parent is not None else target


class ChartHighlight(QFrame):
    """A frame around the chart a lesson points at; lets every click through.

    It sits in the chart's parent, just outside the chart (in the layout's spacing), so it
    never covers the chart's own edges (tick labels run to the bottom edge).
    """

    MARGIN = 5

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("lessonHighlight")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet(
            f"#lessonHighlight {{ border: 4px solid {HIGHLIGHT}; border-radius: 6px;"
            " background: transparent; }"
        )
        self.target: QWidget | None = None
        self.chart_id: str | None = None
        self._watched: list[QWidget] = []
        self.hide()

    def attach(self, target: QWidget | None, chart_id: str | None) -> None:
        for watched in self._watched:
            if shiboken6.isValid(watched):
                watched.removeEventFilter(self)
        self._watched = []
        self.target = target
        self.chart_id = chart_id
        if target is None:
            self.hide()
            return
        parent = frame_parent(target)
        self.setParent(parent)
        self._follow()
        # The target, and the splitters between it and the frame's parent, move it.
        widget: QWidget | None = target
        while widget is not None and widget is not parent:
            widget.installEventFilter(self)
            self._watched.append(widget)
            widget = widget.parentWidget()
        self.raise_()
        self.show()

    def _follow(self) -> None:
        target, parent = self.target, self.parentWidget()
        if target is None or parent is None:  # attach() gives it a parent with its target
            return
        if parent is target:
            self.setGeometry(target.rect())
            return
        m = self.MARGIN
        box = QRect(target.mapTo(parent, QPoint(0, 0)), target.size())
        self.setGeometry(box.adjusted(-m, -m, m, m))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched in self._watched and event.type() in (QEvent.Type.Resize, QEvent.Type.Move):
            self._follow()
        return False
