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
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from autocast_explorer.gui.charts import formats
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.tables import WrappingHeader, cell, column_header, row_texts

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
#: The in → out columns: they wrap after the arrow ("float32 →" over "bfloat16") when the
#: "computed in" sentence would not keep COMPUTE_MIN_CHARS beside them in the tab.
DTYPE_COLUMNS = (COLUMNS.index("Plain (in → out)"), COLUMNS.index("Autocast (in → out)"))
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
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        header = WrappingHeader(self)  # "Plain (in → out)" over two lines in a narrow column
        self.setHorizontalHeader(header)
        self.setHorizontalHeaderLabels(COLUMNS + ERROR_COLUMNS)
        column_header(self, COMPUTE_COLUMN).setToolTip(COMPUTE_TIP)
        for offset, tip in enumerate(ERROR_TIPS):
            column_header(self, len(COLUMNS) + offset).setToolTip(tip)
        # Every column keeps its text's width (nested modules have long names:
        # 'encoder1.self_attn', 'MultiheadAttention'); the last one takes what is left, and a
        # table wider than the tab scrolls sideways rather than cutting names or numbers.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        for shown, name in enumerate(SHOWN_ORDER):
            header.moveSection(header.visualIndex(COLUMNS.index(name)), shown)
        # What a layer computed in is a sentence: it wraps within the room left in the tab, and
        # the in → out columns wrap too where that room would be too small (_fit_columns).
        for column in (COMPUTE_COLUMN, *DTYPE_COLUMNS):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        self.setWordWrap(True)

    def _fit_columns(self) -> None:
        """The in → out columns as wide as their text, or wrapped after the arrow when the
        "computed in" column would otherwise get under COMPUTE_MIN_CHARS before the tab's right
        edge; that column as wide as its text or the room left, whichever is less (never under
        COMPUTE_MIN_CHARS); the rows as tall as the wrapped text. At 1024×640 with 150% text
        beside the Lessons panel the sentence needed a sideways scroll."""
        header = self.horizontalHeader()
        floor = self.fontMetrics().averageCharWidth() * COMPUTE_MIN_CHARS
        full = [
            max(self._cells_width(c, wrapped=False), header.sectionSizeHint(c))
            for c in DTYPE_COLUMNS
        ]
        beside_layer = self.viewport().width() - header.sectionPosition(DTYPE_COLUMNS[0])
        wrap = beside_layer - sum(full) < floor
        widths = [self._cells_width(c, wrapped=True) for c in DTYPE_COLUMNS] if wrap else full
        for column, width in zip(DTYPE_COLUMNS, widths, strict=True):
            if header.sectionSize(column) != width:
                header.resizeSection(column, width)
        room = self.viewport().width() - header.sectionPosition(COMPUTE_COLUMN)
        width = max(floor, min(self._cells_width(COMPUTE_COLUMN, wrapped=False), room))
        if header.sectionSize(COMPUTE_COLUMN) != width:
            header.resizeSection(COMPUTE_COLUMN, width)
        self.resizeRowsToContents()

    def _cells_width(self, column: int, wrapped: bool) -> int:
        """The width `column`'s cells need on one line each, or `wrapped`: each broken after
        its arrow, and the title at its words. Measured from the text, not Qt's size hint:
        with word wrap on, that follows the column's present width."""
        metrics = self.fontMetrics()
        texts = [cell(self, row, column).text() for row in range(self.rowCount())]
        if wrapped:
            texts = [line for t in texts for line in t.replace("→ ", "→\n").split("\n")]
            texts += column_header(self, column).text().split()
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self)
        padding = 2 * (margin + 1) + 2  # Qt's text margin each side, the grid line, a pixel
        return max((metrics.horizontalAdvance(t) for t in texts), default=0) + padding

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # a new text scale
            self._fit_columns()

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
        self._fit_columns()

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
