"""The Layers table's "Keep in float32" column: a check box on each row.

A column has no widget of its own, so its delegate carries the objectName `keepFloat32Column`
(find it with `findChild(QObject, "keepFloat32Column")`). A click anywhere in a cell, or Space
on the current cell, flips that row's check and emits `toggled(row, kept)`; whoever binds the
column to the experiment's state answers by showing the state's keep set (`show_kept`), so a
check always says what the next run keeps.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import (
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
)

from autocast_explorer.gui.shell.tables import cell

HEADER = "Keep in float32"
TIP = (
    "Keep this layer in float32 on the next run: autocast is off inside it and its inputs are "
    "made float32 (the patterns above the table say the same, by path or class name)."
)
_TOGGLE_KEYS = (Qt.Key.Key_Space, Qt.Key.Key_Select)
_CHECKED = {True: Qt.CheckState.Checked, False: Qt.CheckState.Unchecked}


class KeepFloat32Column(QStyledItemDelegate):
    """The check boxes of one column of `table` (objectName `keepFloat32Column`)."""

    #: A row's check was flipped by a click, Space or `set_kept`: (row, kept now).
    toggled = Signal(int, bool)

    def __init__(self, table: QTableWidget, column: int) -> None:
        super().__init__(table)
        self.setObjectName("keepFloat32Column")
        self._table = table
        self._column = column
        table.setItemDelegateForColumn(column, self)

    @property
    def column(self) -> int:
        """The column's index in the table's model (`table.item(row, column)`)."""
        return self._column

    def item(self, layer: str) -> QTableWidgetItem:
        """A new check cell for the row of `layer` (unchecked until the state is shown)."""
        item = QTableWidgetItem("")
        item.setFlags(
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsUserCheckable
        )
        item.setCheckState(Qt.CheckState.Unchecked)
        item.setToolTip(f"{layer}: {TIP}")
        return item

    def is_kept(self, row: int) -> bool:
        return cell(self._table, row, self._column).checkState() == Qt.CheckState.Checked

    def kept_rows(self) -> list[bool]:
        """Each row's check, top to bottom."""
        return [self.is_kept(row) for row in range(self._table.rowCount())]

    def set_kept(self, row: int, kept: bool) -> None:
        """Check or uncheck `row` as a click would (`toggled` when it changes)."""
        if self.is_kept(row) != kept:
            self._toggle(row)

    def show_kept(self, kept: list[bool]) -> None:
        """Show these checks (one per row), emitting nothing."""
        for row, flag in enumerate(kept):
            cell(self._table, row, self._column).setCheckState(_CHECKED[flag])

    def _toggle(self, row: int) -> None:
        kept = not self.is_kept(row)
        cell(self._table, row, self._column).setCheckState(_CHECKED[kept])
        self.toggled.emit(row, kept)

    def editorEvent(
        self,
        event: QEvent,
        model: QAbstractItemModel,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """A left click released in the cell, or Space on it, flips its check."""
        if isinstance(event, QMouseEvent) and event.type() == QEvent.Type.MouseButtonRelease:
            inside = option.rect.contains(event.position().toPoint())  # type: ignore[attr-defined]
            if event.button() == Qt.MouseButton.LeftButton and inside:
                self._toggle(index.row())
                return True
        if isinstance(event, QKeyEvent) and event.key() in _TOGGLE_KEYS:
            self._toggle(index.row())
            return True
        return False
