"""Pages that stay readable in a narrow window: side-by-side panes that stack, and a scroll page.

At 1024×640 with the Lessons panel open a result tab gets about 380 px of width; two charts side
by side then cut their titles and axes. A ReflowRow lays its panes side by side while each gets
at least `pane_width` pixels and one above the other below that; a scroll page gives the stacked
panes the height they need (minimum heights) and scrolls instead of squashing or overlapping.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QFrame, QScrollArea, QSplitter, QTabWidget, QWidget

from autocast_explorer.gui.shell import style

#: How much more than its minimum width a pane of a ReflowRow gets before the row goes side by
#: side (a row squeezed to its minimums stacks instead of making its page scroll sideways).
PANE_SLACK = 20


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
        """The width at which the panes go side by side: each gets `pane_width` (at 100% text,
        grown with the text scale: titles and axes widen with it), or a little more than its
        own minimum where that is more. Strictly more than the minimums, so a row laid out at
        its minimum stacks."""
        pane_width = round(self.pane_width * style.text_scale(self))
        widths = [
            max(
                pane_width,
                max(pane.minimumWidth(), pane.minimumSizeHint().width()) + PANE_SLACK,
            )
            for pane in self._panes
        ]
        return sum(widths) + (len(self._panes) - 1) * self.box.spacing()

    def _reflow(self, width: int) -> None:
        wanted = (
            QBoxLayout.Direction.LeftToRight
            if width >= self.needed_width()
            else QBoxLayout.Direction.TopToBottom
        )
        if wanted != self.box.direction():
            self.box.setDirection(wanted)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._reflow(event.size().width())
        super().resizeEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        # A new text scale changes the width the panes need, at the same row width.
        if event.type() == QEvent.Type.FontChange:
            self._reflow(self.width())
        super().changeEvent(event)


#: Property on a QBoxLayout or QSplitter of a tab page: the viewport width (px, at 100% text)
#: below which it stacks its panes (top to bottom) instead of laying them side by side.
REFLOW_WIDTH = "reflowWidth"


def reflow_below(item: QBoxLayout | QSplitter, width: int) -> None:
    """Mark a row of panes in a tab page to stack when the tab is narrower than `width`."""
    item.setProperty(REFLOW_WIDTH, width)


def _side_by_side_width(item: QBoxLayout | QSplitter) -> int:
    """The least width at which the panes fit side by side (their minimums, the spacing)."""
    if isinstance(item, QSplitter):
        widgets = [w for i in range(item.count()) if (w := item.widget(i)) is not None]
        widths = [max(w.minimumSizeHint().width(), w.minimumWidth()) for w in widgets]
        return sum(widths) + item.handleWidth() * max(len(widths) - 1, 0)
    items = [it for i in range(item.count()) if (it := item.itemAt(i)) is not None]
    widths = [it.minimumSize().width() for it in items if not it.isEmpty()]
    margins = item.contentsMargins()
    spacing = max(item.spacing(), 0) * max(len(widths) - 1, 0)
    return sum(widths) + spacing + margins.left() + margins.right()


def apply_reflow(page: QWidget, width: int) -> None:
    """Set every marked row in `page` side by side or stacked for a viewport `width` wide: side
    by side from its mark's width (at 100% text, grown with the text scale, as a ReflowRow's
    pane width is), and only where its panes' minimums fit."""
    scale = style.text_scale(page)
    rows: list[QSplitter | QBoxLayout] = [
        *page.findChildren(QSplitter),
        *page.findChildren(QBoxLayout),
    ]
    for row in rows:
        need = row.property(REFLOW_WIDTH)
        if need:
            _set_side_by_side(row, width >= max(round(need * scale), _side_by_side_width(row)))


def _set_side_by_side(row: QSplitter | QBoxLayout, side: bool) -> None:
    if isinstance(row, QSplitter):
        wanted = Qt.Orientation.Horizontal if side else Qt.Orientation.Vertical
        if row.orientation() != wanted:
            row.setOrientation(wanted)
            count = row.count()
            row.setSizes([10_000 // count] * count)  # shares, rescaled by the splitter
        return
    direction = QBoxLayout.Direction.LeftToRight if side else QBoxLayout.Direction.TopToBottom
    if row.direction() != direction:
        row.setDirection(direction)


class FitScrollArea(QScrollArea):
    """A scroll area that gives its widget the viewport's size, and more only where the widget's
    minimum needs it: its charts' minimum heights and its wrapped labels' lines at that width.

    QScrollArea's widgetResizable sizes a widget whose layout wraps text at its *preferred*
    height for the width (every chart at its size hint), so a page that fits scrolled anyway;
    here the page fills the viewport and scrolls only when it cannot fit.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().installEventFilter(self)

    @staticmethod
    def needed_size(page: QWidget, width: int) -> tuple[int, int]:
        """(width, height) the widget `page` needs at least for a viewport `width` wide."""
        width = max(width, page.minimumSizeHint().width(), page.minimumWidth())
        layout = page.layout()
        if layout is not None and layout.hasHeightForWidth():
            height = layout.minimumHeightForWidth(width)
        else:
            height = page.minimumSizeHint().height()
        return width, max(height, page.minimumHeight())

    def fit(self) -> None:
        page = self.widget()
        if page is None:
            return
        view = self.viewport().size()
        apply_reflow(page, view.width())
        width, height = self.needed_size(page, view.width())
        page.resize(width, max(height, view.height()))

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return handled

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.viewport() and event.type() == QEvent.Type.Resize:
            self.fit()
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()


def scroll_page(content: QWidget, name: str) -> QScrollArea:
    """`content` in a frameless scroll area named `name`: vertical bar when taller, and a
    horizontal one only if `content` cannot be as narrow as the viewport (never clipped)."""
    area = FitScrollArea()
    area.setObjectName(name)
    area.setWidget(content)
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
        parent = page.parentWidget()
        area = parent.parentWidget() if parent is not None else None
        return area if isinstance(area, QScrollArea) and area.widget() is page else None

    def _wrap(self, page: QWidget) -> QScrollArea:
        area = FitScrollArea()
        area.setWidget(page)
        return area

    def addTab(self, page: QWidget, *args: Any) -> int:  # (page, label) or (page, icon, label)
        return super().addTab(self._wrap(page), *args)

    def insertTab(self, index: int, page: QWidget, *args: Any) -> int:
        return super().insertTab(index, self._wrap(page), *args)

    def widget(self, index: int) -> QWidget | None:
        area = super().widget(index)
        return area.widget() if isinstance(area, QScrollArea) else area

    # Qt's currentWidget() is None without tabs; the stub says QWidget.
    def currentWidget(self) -> QWidget | None:  # type: ignore[override]
        return self.widget(self.currentIndex())

    def indexOf(self, page: QWidget) -> int:
        area = self._area(page) if page is not None else None
        return super().indexOf(area if area is not None else page)

    def setCurrentWidget(self, page: QWidget) -> None:
        index = self.indexOf(page)
        if index >= 0:
            self.setCurrentIndex(index)
