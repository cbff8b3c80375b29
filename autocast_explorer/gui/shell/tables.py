"""A QTableWidget's items where the table's own fill put them.

Qt answers None for an empty cell; our tables fill every cell and header they read back, so a
gap is a bug, raised with the table and cell named instead of an AttributeError on None.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget, QTableWidgetItem


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
