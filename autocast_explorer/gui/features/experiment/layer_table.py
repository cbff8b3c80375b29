"""Per-layer results table: name, kind, output shape, in → out dtype in each mode, and error.

The error columns are core's `layer.error` (core/numerics.py), written by gui.formats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from autocast_explorer.gui.charts import formats
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.tables import cell, column_header, row_texts

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

#: The columns in the order they are shown (rows() keeps COLUMNS' order): both modes' dtypes
#: beside the layer's name, so a narrow tab shows them before the kind and the output shape.
SHOWN_ORDER = (
    "Layer",
    "Plain (in → out)",
    "Autocast (in → out)",
    "Autocast computed in",
    "Kind",
    "Output shape",
)
#: The least room the "computed in" column keeps (characters); it wraps inside it.
COMPUTE_MIN_CHARS = 24
#: The autocast cell of a layer the autocast forward never reached (it raised first).
NOT_RUN = "did not run (raised)"
COLUMNS = (
    "Layer",
    "Kind",
    "Output shape",
    "Plain (in → out)",
    "Autocast (in → out)",
    "Autocast computed in",
)
#: The compute cell of a result with no attributed ops (a training run, an older file).
NO_TRACE = "not traced"
COMPUTE_COLUMN = COLUMNS.index("Autocast computed in")
COMPUTE_TIP = (
    "What the layer's ops ran in under autocast, from the op trace: per dtype its matrix "
    "product (else its most frequent op), the casts inside it, and the dtype it returned. A GRU "
    "can return float32 while its matrix products run in bfloat16. 'not traced': the result "
    "has no op trace per layer (a training run, an older file)."
)
#: Error of the autocast output against the float32 output, per layer.
ERROR_COLUMNS = ("Max |err|", "Mean rel err", "SQNR (dB)", "Cosine")
ERROR_TIPS = (
    "max |float32 − autocast| over the layer's output",
    "mean |float32 − autocast| ÷ mean |float32|",
    "10·log10(mean(float32²) / mean((float32 − autocast)²)); higher is closer to float32",
    "cosine similarity of the flattened float32 and autocast outputs",
)


class LayerTable(QTableWidget):
    """A result view listing every hooked layer; objectName `layerTable`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS) + len(ERROR_COLUMNS), parent)
        self.setObjectName("layerTable")
        self.setToolTip(
            "Every layer of the model with the dtypes its input and output had, measured with "
            "wrapped forwards in a plain run and under autocast, and what each layer's ops "
            "computed in."
        )
        self.setHorizontalHeaderLabels(COLUMNS + ERROR_COLUMNS)
        column_header(self, COMPUTE_COLUMN).setToolTip(COMPUTE_TIP)
        for offset, tip in enumerate(ERROR_TIPS):
            column_header(self, len(COLUMNS) + offset).setToolTip(tip)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        # Every column keeps its text's width (nested modules have long names:
        # 'encoder1.self_attn', 'MultiheadAttention'); the last one takes what is left, and a
        # table wider than the tab scrolls sideways rather than cutting names or numbers.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        for shown, name in enumerate(SHOWN_ORDER):
            header.moveSection(header.visualIndex(COLUMNS.index(name)), shown)
        # What a layer computed in is a sentence: it wraps within the room left in the tab.
        header.setSectionResizeMode(COMPUTE_COLUMN, QHeaderView.ResizeMode.Interactive)
        self.setWordWrap(True)

    def _fit_compute_column(self) -> None:
        """The "Autocast computed in" column as wide as its text or the room left before the
        tab's right edge, whichever is less (never under COMPUTE_MIN_CHARS), its rows as tall
        as the wrapped text: in a narrow tab both autocast columns were cut at the edge."""
        header = self.horizontalHeader()
        room = self.viewport().width() - header.sectionPosition(COMPUTE_COLUMN)
        floor = self.fontMetrics().averageCharWidth() * COMPUTE_MIN_CHARS
        width = max(floor, min(self.sizeHintForColumn(COMPUTE_COLUMN), room))
        if header.sectionSize(COMPUTE_COLUMN) != width:
            header.resizeSection(COMPUTE_COLUMN, width)
        self.resizeRowsToContents()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_compute_column()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # a new text scale
            self._fit_compute_column()

    def show_result(self, result: ExperimentResult) -> None:
        from autocast_explorer.core.experiment.summary import compute_sentence

        self.setRowCount(len(result.layers))
        for row, layer in enumerate(result.layers):
            shape = "×".join(str(n) for n in layer.out_shape) if layer.out_shape else "?"
            values = (
                layer.name,
                layer.kind,
                shape,
                f"{layer.plain.in_dtype} → {layer.plain.out_dtype}",
                (
                    f"{layer.autocast.in_dtype} → {layer.autocast.out_dtype}"
                    if layer.autocast is not None
                    else NOT_RUN
                ),
                compute_sentence(result, layer) or (NO_TRACE if layer.autocast else NOT_RUN),
            )
            for col, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if col >= 3:
                    auto = layer.autocast.out_dtype if layer.autocast is not None else ""
                    out = layer.plain.out_dtype if col == 3 else auto
                    if col == 5 and layer.autocast is not None and layer.autocast.compute:
                        out = next(iter(layer.autocast.compute.dtypes), out)
                    tint = QColor(style.dtype_color(out))
                    tint.setAlpha(70)
                    item.setBackground(tint)
                self.setItem(row, col, item)
            self._set_error_cells(row, layer.error)
        self._fit_compute_column()

    def _set_error_cells(self, row: int, error) -> None:
        """Four error cells; the exact value rides along as UserRole data."""
        if error is None:
            cells = [(formats.NOT_MEASURED, None)] * len(ERROR_COLUMNS)
        else:
            cells = [
                (formats.g3(error.max_abs), error.max_abs),
                (formats.g3(error.mean_rel), error.mean_rel),
                (formats.sqnr(error), error.sqnr_db),
                (formats.cosine(error.cosine), error.cosine),
            ]
        for offset, (text, value) in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setData(Qt.ItemDataRole.UserRole, value)
            item.setToolTip(ERROR_TIPS[offset])
            self.setItem(row, len(COLUMNS) + offset, item)

    def error_values(self) -> list[tuple[float | None, ...]]:
        """(max abs, mean rel, SQNR dB, cosine) per row, as held by the error cells."""
        return [
            tuple(
                cell(self, r, len(COLUMNS) + c).data(Qt.ItemDataRole.UserRole)
                for c in range(len(ERROR_COLUMNS))
            )
            for r in range(self.rowCount())
        ]

    def clear(self) -> None:
        self.setRowCount(0)

    def rows(self) -> list[tuple[str, ...]]:
        """The table's text, row by row (for tests and copy/paste)."""
        return [row_texts(self, r) for r in range(self.rowCount())]
