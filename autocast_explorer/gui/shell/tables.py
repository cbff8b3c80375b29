"""A QTableWidget's items where the table's own fill put them, a column that takes the rest of
a table's width, and a header whose titles wrap.

Qt answers None for an empty cell; our tables fill every cell and header they read back, so a
gap is a bug, raised with the table and cell named instead of an AttributeError on None.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Slot
from PySide6.QtWidgets import QHeaderView, QStyle, QTableWidget, QTableWidgetItem


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    """The item at (row, column), which the table's fill set."""
    return _present(table.item(row, column), table, f"row {row}, column {column}")


def row_texts(table: QTableWidget, row: int) -> tuple[str, ...]:
    """The text of every cell in `row`, left to right (the read-back tests compare)."""
    return tuple(cell(table, row, c).text() for c in range(table.columnCount()))


def column_header(table: QTableWidget, column: int) -> QTableWidgetItem:
    """The header item of `column` (set with setHorizontalHeaderLabels)."""
    return _present(table.horizontalHeaderItem(column), table, f"column {column}'s header")


def row_header(table: QTableWidget, row: int) -> QTableWidgetItem:
    """The header item of `row` (set with setVerticalHeaderLabels)."""
    return _present(table.verticalHeaderItem(row), table, f"row {row}'s header")


def _present(item: QTableWidgetItem | None, table: QTableWidget, where: str) -> QTableWidgetItem:
    if item is None:
        raise LookupError(f"table {table.objectName()!r} has no item at {where}")
    return item


class RestOfWidth(QObject):
    """Column `column` of `table` takes the width its other columns leave in the view, never
    less than its own text needs (the table then scrolls sideways).

    Qt's Stretch gives a column whatever is left, down to a few pixels (the op trace's "aten op"
    was 30 px wide in a narrow tab); sized to its text instead, the columns after it were cut
    wherever the table was a little narrow. `fit()` after filling the table; it fits again when
    the view or another column changes size.
    """

    def __init__(self, table: QTableWidget, column: int) -> None:
        super().__init__(table)
        self._table = table
        self._column = column
        header = table.horizontalHeader()
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.sectionResized.connect(self._on_section_resized)
        self._viewport = table.viewport()
        self._viewport.installEventFilter(self)

    def fit(self) -> None:
        table, column = self._table, self._column
        header = table.horizontalHeader()
        others = sum(
            header.sectionSize(c)
            for c in range(header.count())
            if c != column and not header.isSectionHidden(c)
        )
        needed = max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
        width = max(needed, table.viewport().width() - others)
        if header.sectionSize(column) != width:
            header.resizeSection(column, width)

    @Slot(int, int, int)
    def _on_section_resized(self, logical: int, _old: int, _new: int) -> None:
        if logical != self._column:
            self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._viewport and event.type() == QEvent.Type.Resize:
            self.fit()
        return False


class WrappingHeader(QHeaderView):
    """A horizontal header whose titles wrap within their sections, growing taller, so a column
    may be narrower than its title: Qt's header keeps one line and cuts the rest."""

    def __init__(self, table: QTableWidget) -> None:
        super().__init__(Qt.Orientation.Horizontal, table)
        self.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self._tallest = 0
        self.sectionResized.connect(self._on_section_resized)

    def sectionSizeFromContents(self, logicalIndex: int) -> QSize:
        size = super().sectionSizeFromContents(logicalIndex)
        text = self.model().headerData(logicalIndex, self.orientation()) if self.model() else None
        if not text:
            return size
        metrics = self.fontMetrics()
        margin = 2 * self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, self)
        room = max(self.sectionSize(logicalIndex) - margin, 1)
        flags = int(Qt.TextFlag.TextWordWrap)
        wrapped = metrics.boundingRect(QRect(0, 0, room, 100_000), flags, str(text)).height()
        return QSize(size.width(), size.height() + wrapped - metrics.height())

    @Slot(int, int, int)
    def _on_section_resized(self, _logical: int, _old: int, _new: int) -> None:
        """Ask for the height again when a title now takes more lines, or fewer (Qt keeps the
        header's size hint until its data changes)."""
        count = self.count()
        tallest = max((self.sectionSizeFromContents(i).height() for i in range(count)), default=0)
        if count and tallest != self._tallest:
            self._tallest = tallest
            self.headerDataChanged(self.orientation(), 0, count - 1)
