"""Pages that stay readable in a narrow window: side-by-side panes that stack, and a scroll page.

At 1024×640 with the Lessons panel open a result tab gets about 380 px of width; two charts side
by side then cut their titles and axes. A ReflowRow lays its panes side by side while each gets
at least `pane_width` pixels and one above the other below that; a scroll page gives the stacked
panes the height they need (minimum heights) and scrolls instead of squashing or overlapping.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QFrame, QScrollArea, QTabWidget, QWidget


class ReflowRow(QWidget):
    """Panes side by side when each gets `pane_width` px, else stacked (top to bottom)."""

    def __init__(
        self,
        panes: list[tuple[QWidget, int]],
        pane_width: int,
        parent: QWidget | None = None,
        spacing: int = 8,
    ) -> None:
        super().__init__(parent)
        self.pane_width = pane_width
        self._panes = [pane for pane, _ in panes]
        self.box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.setSpacing(spacing)
        for pane, stretch in panes:
            self.box.addWidget(pane, stretch)

    def stacked(self) -> bool:
        """True while the panes are one above the other."""
        return self.box.direction() == QBoxLayout.Direction.TopToBottom

    def needed_width(self) -> int:
        """The width at which the panes go side by side."""
        return len(self._panes) * self.pane_width + (len(self._panes) - 1) * self.box.spacing()

    def resizeEvent(self, event: QResizeEvent) -> None:
        wanted = (
            QBoxLayout.Direction.LeftToRight
            if event.size().width() >= self.needed_width()
            else QBoxLayout.Direction.TopToBottom
        )
        if wanted != self.box.direction():
            self.box.setDirection(wanted)
        super().resizeEvent(event)


def scroll_page(content: QWidget, name: str) -> QScrollArea:
    """`content` in a frameless scroll area named `name`: vertical bar when taller, and a
    horizontal one only if `content` cannot be as narrow as the viewport (never clipped)."""
    area = QScrollArea()
    area.setObjectName(name)
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    return area


class ScrollingTabs(QTabWidget):
    """A QTabWidget whose every page sits in its own scroll area.

    A page asks for its minimum size (a chart pair, a toolbar: 440–800 px wide); a QTabWidget
    asks for the largest of them, and where the window cannot give it (1024 px with the Lessons
    panel, 150% text) the splitter lays the results over the controls. Here the tab widget asks
    for little and a page narrower or shorter than its minimum scrolls. The pages stay what
    callers handle: widget(), currentWidget(), indexOf() and setCurrentWidget() speak of the
    page, never of its scroll area.
    """

    def _area(self, page: QWidget) -> QScrollArea | None:
        area = page.parentWidget().parentWidget() if page.parentWidget() is not None else None
        return area if isinstance(area, QScrollArea) and area.widget() is page else None

    def _wrap(self, page: QWidget) -> QScrollArea:
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setWidget(page)
        return area

    def addTab(self, page: QWidget, *args: object) -> int:
        return super().addTab(self._wrap(page), *args)

    def insertTab(self, index: int, page: QWidget, *args: object) -> int:
        return super().insertTab(index, self._wrap(page), *args)

    def widget(self, index: int) -> QWidget | None:
        area = super().widget(index)
        return area.widget() if isinstance(area, QScrollArea) else area

    def currentWidget(self) -> QWidget | None:
        return self.widget(self.currentIndex())

    def indexOf(self, page: QWidget) -> int:
        area = self._area(page) if page is not None else None
        return super().indexOf(area if area is not None else page)

    def setCurrentWidget(self, page: QWidget) -> None:
        index = self.indexOf(page)
        if index >= 0:
            self.setCurrentIndex(index)
