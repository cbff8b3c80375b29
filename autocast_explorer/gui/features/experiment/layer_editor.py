"""A small editor for the widths list: one row per width, add or remove hidden layers.

It edits the same text the widths field holds, so the field stays the one source of truth.
"""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config_rules import MAX_LAYERS, MAX_WIDTH
from autocast_explorer.gui.shell.tables import cell


class LayerEditorDialog(QDialog):
    """Edit widths as a list; `widths()` gives the result after the dialog is accepted."""

    def __init__(self, widths: tuple[int, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("layerEditor")
        self.setWindowTitle("Layers")
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("First row: input width. Last row: number of classes.\nRows between: hidden.")
        )
        self.table = QTableWidget(0, 2)
        self.table.setObjectName("layerEditorTable")
        self.table.setHorizontalHeaderLabels(["Role", "Width"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        layout.addWidget(self.table)
        row = QHBoxLayout()
        self.addButton = QPushButton("Add hidden layer")
        self.addButton.setObjectName("addLayerButton")
        self.addButton.setToolTip("Insert a hidden layer after the selected row.")
        self.addButton.clicked.connect(self._add)
        self.removeButton = QPushButton("Remove")
        self.removeButton.setObjectName("removeLayerButton")
        self.removeButton.setToolTip("Remove the selected hidden layer.")
        self.removeButton.clicked.connect(self._remove)
        row.addWidget(self.addButton)
        row.addWidget(self.removeButton)
        layout.addLayout(row)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        for width in widths if len(widths) >= 2 else (256, 10):
            self._insert(self.table.rowCount(), width)
        self._relabel()
        self.resize(320, 360)

    def _insert(self, row: int, width: int) -> None:
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(""))
        spin = QSpinBox()
        spin.setRange(1, MAX_WIDTH)
        spin.setValue(max(1, min(width, MAX_WIDTH)))
        spin.setToolTip("Width of this layer's output (the input width on the first row).")
        self.table.setCellWidget(row, 1, spin)

    def _relabel(self) -> None:
        n = self.table.rowCount()
        for row in range(n):
            role = "input" if row == 0 else "classes" if row == n - 1 else f"hidden {row}"
            cell(self.table, row, 0).setText(role)
        self.removeButton.setEnabled(n > 2)
        self.addButton.setEnabled(n <= MAX_LAYERS)

    @Slot()
    def _add(self) -> None:
        current = self.table.currentRow()
        last = self.table.rowCount() - 1  # the classes row: new layers go before it
        row = last if current < 0 else min(max(current + 1, 1), last)
        self._insert(row, self.widths()[row - 1])
        self.table.selectRow(row)
        self._relabel()

    @Slot()
    def _remove(self) -> None:
        row = self.table.currentRow()
        if self.table.rowCount() <= 2:
            return
        if row <= 0 or row >= self.table.rowCount() - 1:
            row = self.table.rowCount() - 2  # never the input or the classes row
        self.table.removeRow(row)
        self._relabel()

    def widths(self) -> tuple[int, ...]:
        spins = (self.table.cellWidget(r, 1) for r in range(self.table.rowCount()))
        return tuple(spin.value() for spin in spins if isinstance(spin, QSpinBox))
