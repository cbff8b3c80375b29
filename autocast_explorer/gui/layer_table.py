"""Per-layer results table: name, kind, output shape and in → out dtype in each mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from autocast_explorer.gui import style

if TYPE_CHECKING:
    from autocast_explorer.core.result import ExperimentResult

COLUMNS = ("Layer", "Kind", "Output shape", "Plain (in → out)", "Autocast (in → out)")


class LayerTable(QTableWidget):
    """A result view listing every hooked layer; objectName `layerTable`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("layerTable")
        self.setToolTip(
            "Every layer of the model with the dtypes its input and output had, measured with "
            "forward hooks in a plain run and under autocast."
        )
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)

    def show_result(self, result: ExperimentResult) -> None:
        self.setRowCount(len(result.layers))
        for row, layer in enumerate(result.layers):
            shape = "×".join(str(n) for n in layer.out_shape) if layer.out_shape else "?"
            values = (
                layer.name,
                layer.kind,
                shape,
                f"{layer.plain.in_dtype} → {layer.plain.out_dtype}",
                f"{layer.autocast.in_dtype} → {layer.autocast.out_dtype}",
            )
            for col, text in enumerate(values):
                item = QTableWidgetItem(text)
                if col >= 3:
                    out = layer.plain.out_dtype if col == 3 else layer.autocast.out_dtype
                    tint = QColor(style.dtype_color(out))
                    tint.setAlpha(70)
                    item.setBackground(tint)
                self.setItem(row, col, item)

    def clear(self) -> None:
        self.setRowCount(0)

    def rows(self) -> list[tuple[str, ...]]:
        """The table's text, row by row (for tests and copy/paste)."""
        return [
            tuple(self.item(r, c).text() for c in range(self.columnCount()))
            for r in range(self.rowCount())
        ]
