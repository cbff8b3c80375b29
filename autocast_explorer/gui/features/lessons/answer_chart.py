"""The view that answers a lesson: which one this window has, and the frame around it.

A lesson names its answer by view id (core's CHARTS), the id the feature that draws it
registered it under (`add_view`, `add_view_part`): the context knows which tab holds it and which
part of it answers (`view_focus`), so no other feature is imported and no widget is looked up
by its objectName. Apart from the panel because following a widget through splitters and
resizes is not about walking through steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtWidgets import QFrame, QSplitter, QWidget

from autocast_explorer.core.learning.lessons import CHARTS, EARLIER_CHART_IDS, FALLBACK_CHART

if TYPE_CHECKING:
    from autocast_explorer.core.learning.lessons import Lesson
    from autocast_explorer.gui.shell.context import AppContext

HIGHLIGHT = "#c2185b"


def chart_target(ctx: AppContext, chart_id: str) -> tuple[str, QWidget | None]:
    """(the view id shown, the widget to frame): the view `chart_id` names, or the dtype
    chart when this window has no such view (an earlier id, such as "ops", is read as today's)."""
    view_id = EARLIER_CHART_IDS.get(chart_id, chart_id)
    if ctx.view(view_id) is None:
        view_id = FALLBACK_CHART
    return view_id, ctx.view_focus(view_id)


def answer_id(chart_id: str, shown: str) -> str:
    """The id a lesson's chart is reported by: the one asked for when that view was shown (an
    earlier id too: "ops" stays "ops"), else the stand-in's."""
    return chart_id if EARLIER_CHART_IDS.get(chart_id, chart_id) == shown else shown


def chart_title(ctx: AppContext, lesson: Lesson) -> str:
    """What the panel names as the answering chart, saying so when it stands in for another."""
    view_id, _target = chart_target(ctx, lesson.chart)
    title = CHARTS[view_id] + (" chart" if view_id != "layers" else "")
    if view_id != lesson.chart:
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
