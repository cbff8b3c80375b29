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
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, Slot
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QWidget

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
    """Where the frame around `target` lives: the page it scrolls in (the scroll area's
    widget), which has room on every side of it, else its nearest ancestor that is no QSplitter
    (a splitter makes every child widget a pane: the frame would be an empty third pane beside
    the loss chart), else `target` itself.

    Not simply the chart's parent: a row with no margins (the Overview's latency and agreement
    charts) cut the frame to the one edge that lay in its spacing."""
    area = scroll_area_of(target)
    page = area.widget() if area is not None else None
    if page is not None and page.isAncestorOf(target):
        return page
    parent = target.parentWidget()
    while isinstance(parent, QSplitter):
        parent = parent.parentWidget()
    return parent if parent is not None else target


def scroll_area_of(widget: QWidget) -> QScrollArea | None:
    """The nearest scroll area `widget` scrolls in (None: it is always in its page's view)."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    return parent


class ChartHighlight(QFrame):
    """A frame around the chart a lesson points at; lets every click through.

    It sits in the page the chart scrolls in, just outside the chart (in the layout's spacing
    and margins), so it never covers the chart's own edges (tick labels run to the bottom edge)
    and no widget between them cuts it. The page scrolls
    the chart into view with its frame (the Overview's dtype chart sat below the fold), again
    whenever the layout moves it, until the reader scrolls the page themselves.
    """

    #: How far the frame stands off its chart, and how wide its line is (within MARGIN, so the
    #: line never covers the chart while the page leaves it BORDER px or more on each side).
    MARGIN = 5
    BORDER = 4

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("lessonHighlight")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet(
            f"#lessonHighlight {{ border: {self.BORDER}px solid {HIGHLIGHT}; border-radius: 6px;"
            " background: transparent; }"
        )
        self.target: QWidget | None = None
        self.chart_id: str | None = None
        self._watched: list[QWidget] = []
        self._area: QScrollArea | None = None
        self._viewport: QWidget | None = None
        self._reveal = False
        self.hide()

    def attach(self, target: QWidget | None, chart_id: str | None) -> None:
        for watched in self._watched:
            if shiboken6.isValid(watched):
                watched.removeEventFilter(self)
        self._watched = []
        self._follow_area(None)
        self.target = target
        self.chart_id = chart_id
        if target is None:
            self.hide()
            return
        parent = frame_parent(target)
        self.setParent(parent)
        self._follow()
        # The target and the widgets between it and the frame's parent move it; the parent's
        # size bounds it.
        widget: QWidget | None = target
        while widget is not None:
            widget.installEventFilter(self)
            self._watched.append(widget)
            if widget is parent:
                break
            widget = widget.parentWidget()
        self.raise_()
        self.show()
        self._follow_area(scroll_area_of(target))
        self.reveal()

    def _follow_area(self, area: QScrollArea | None) -> None:
        """Watch `area`'s viewport and how far its page scrolls (a new size of either may hide
        the chart: a tab shown for the first time lays its page out again after the chart was
        revealed) and the reader's scrolling."""
        old = self._area
        if old is not None and shiboken6.isValid(old):
            old.viewport().removeEventFilter(self)
            old.verticalScrollBar().actionTriggered.disconnect(self._on_reader_scrolled)
            old.verticalScrollBar().rangeChanged.disconnect(self._on_range_changed)
        self._area = area
        self._viewport = area.viewport() if area is not None else None
        self._reveal = area is not None
        if area is not None:
            area.viewport().installEventFilter(self)
            area.verticalScrollBar().actionTriggered.connect(self._on_reader_scrolled)
            area.verticalScrollBar().rangeChanged.connect(self._on_range_changed)

    @Slot(int, int)
    def _on_range_changed(self, _low: int, _high: int) -> None:
        self.reveal()

    @Slot(int)
    def _on_reader_scrolled(self, _action: int) -> None:
        """Wheel, keys or the bar (never a program's setValue): the reader takes over."""
        self._reveal = False

    def reveal(self) -> None:
        """Scroll the page the least that shows the chart and its frame whole (its top when
        it is taller than the view). Computed here: QScrollArea.ensureWidgetVisible shows a
        chart's input-method cursor rectangle, a point at its corner, not the chart."""
        area, target = self._area, self.target
        if not self._reveal or area is None or target is None:
            return
        if not (shiboken6.isValid(area) and shiboken6.isValid(target)):
            return
        m = self.MARGIN
        view = area.viewport().height()
        top = target.mapTo(area.viewport(), QPoint(0, 0)).y() - m
        bottom = top + target.height() + 2 * m
        bar = area.verticalScrollBar()
        if top < 0 or bottom - top > view:
            bar.setValue(bar.value() + top)
        elif bottom > view:
            bar.setValue(bar.value() + bottom - view)

    def _follow(self) -> None:
        target, parent = self.target, self.parentWidget()
        if target is None or parent is None:  # attach() gives it a parent with its target
            return
        if parent is target:
            self.setGeometry(target.rect())
            return
        m = self.MARGIN
        box = QRect(target.mapTo(parent, QPoint(0, 0)), target.size())
        # Within its parent, so no edge is cut: where the page's margin is under MARGIN the
        # frame draws closer to the chart.
        self.setGeometry(box.adjusted(-m, -m, m, m).intersected(parent.rect()))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        moved = event.type() in (QEvent.Type.Resize, QEvent.Type.Move)
        if watched is self.parentWidget() and watched is not self.target:
            if event.type() == QEvent.Type.Resize:  # its size bounds the frame; moves do not
                self._follow()
        elif watched in self._watched and moved:
            self._follow()
            self.reveal()
        elif watched is self._viewport and moved:
            self.reveal()
        return False
