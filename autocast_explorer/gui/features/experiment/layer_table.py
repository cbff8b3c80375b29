"""Per-layer results table: name, kind, output shape, in → out dtype in each mode, a "Keep in
float32" check box on each row (keep_column.py), and error; above the columns, the patterns of
the layers the next run keeps in float32 (keep_header.py).

The error columns are core's `layer.error` (core/numerics.py), written by gui.formats. The
patterns field is bound to the experiment state's `keep_float32` as the controls' inputs are
bound to theirs (`binding()`, bindings.py): a keep set from anywhere shows here and survives the
next Run, an edit core refuses stays here with Run off. The check boxes edit the field: a check
adds the row's path, unchecking removes it, and a row another pattern still names stays checked,
the message under the field naming that pattern. A run refused because a pattern names no layer
says so under the field (`keepFloat32Error`), as the banner does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_fields import field_specs
from autocast_explorer.core.experiment.layer_patterns import (
    KEEP_FIELD,
    covering,
    parse_patterns,
    patterns_text,
)
from autocast_explorer.gui.charts import formats
from autocast_explorer.gui.features.experiment import keep_column
from autocast_explorer.gui.features.experiment.bindings import Binding
from autocast_explorer.gui.features.experiment.keep_column import KeepFloat32Column
from autocast_explorer.gui.features.experiment.keep_header import KeepHeader
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.tables import cell, column_header, row_texts

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

#: The columns in the order they are shown (rows() keeps COLUMNS' order): both modes' dtypes
#: beside the layer's name, so a narrow tab shows them before the kind and the output shape;
#: the keep check boxes after the sentence, which keeps its room (the patterns field above the
#: columns is always in view).
SHOWN_ORDER = (
    "Layer",
    "Plain (in → out)",
    "Autocast (in → out)",
    "Autocast computed in",
    keep_column.HEADER,
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
    keep_column.HEADER,
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
#: The check boxes' column (its cells have no text).
KEEP_COLUMN = COLUMNS.index(keep_column.HEADER)


class LayerTable(QTableWidget):
    """A result view listing every hooked layer; objectName `layerTable`. `keepColumn` is its
    "Keep in float32" column (objectName `keepFloat32Column`), `keepEdit` the patterns field."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS) + len(ERROR_COLUMNS), parent)
        self.setObjectName("layerTable")
        spec = field_specs(ExperimentConfig)[KEEP_FIELD]
        self._keep_rule = spec.rule
        self.keepHeader = KeepHeader(self, spec.tooltip())
        self.setHorizontalHeader(self.keepHeader)
        self.keepEdit = self.keepHeader.keepEdit
        self._kinds: dict[str, str] = {}  # each shown row's path → its class
        self._writing = False
        self._edited: Callable[[], None] = lambda: None  # until bound
        self.setToolTip(
            "Every layer of the model with the dtypes its input and output had, measured with "
            "wrapped forwards in a plain run and under autocast, and what each layer's ops "
            "computed in."
        )
        self.setHorizontalHeaderLabels(COLUMNS + ERROR_COLUMNS)
        column_header(self, COMPUTE_COLUMN).setToolTip(COMPUTE_TIP)
        column_header(self, KEEP_COLUMN).setToolTip(keep_column.TIP)
        self.keepColumn = KeepFloat32Column(self, KEEP_COLUMN)
        for offset, tip in enumerate(ERROR_TIPS):
            column_header(self, len(COLUMNS) + offset).setToolTip(tip)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        header = self.keepHeader  # a WrappingHeader: "Plain (in → out)" over two lines
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
        self.keepEdit.textChanged.connect(self._on_keep_text)
        self.keepColumn.toggled.connect(self._on_keep_toggled)

    def _fit_columns(self) -> None:
        """The in → out columns as wide as their text, or wrapped after the arrow when the
        "computed in" column would otherwise get under COMPUTE_MIN_CHARS before the tab's right
        edge; that column as wide as its text or the room left, whichever is less (never under
        COMPUTE_MIN_CHARS), leaving the keep check boxes after it in view where it can; the rows
        as tall as the wrapped text. At 1024×640 with 150% text beside the Lessons panel the
        sentence needed a sideways scroll."""
        header = self.horizontalHeader()
        floor = self.fontMetrics().averageCharWidth() * COMPUTE_MIN_CHARS
        full = [
            max(self._cells_width(c, wrapped=False), header.sectionSizeHint(c))
            for c in DTYPE_COLUMNS
        ]
        beside_layer = self.viewport().width() - header.sectionPosition(DTYPE_COLUMNS[0])
        # the keep check boxes, shown right after the sentence, stay in view too
        after = header.sectionSize(KEEP_COLUMN)
        wrap = beside_layer - sum(full) - after < floor
        widths = [self._cells_width(c, wrapped=True) for c in DTYPE_COLUMNS] if wrap else full
        for column, width in zip(DTYPE_COLUMNS, widths, strict=True):
            if header.sectionSize(column) != width:
                header.resizeSection(column, width)
        room = self.viewport().width() - header.sectionPosition(COMPUTE_COLUMN) - after
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
        from autocast_explorer.core.experiment.summary import compute_sentence, kept_mark

        self.setRowCount(len(result.layers))
        for row, layer in enumerate(result.layers):
            shape = "×".join(str(n) for n in layer.out_shape) if layer.out_shape else "?"
            values = (
                layer.name,
                layer.kind,
                shape,
                f"{layer.plain.in_dtype} → {layer.plain.out_dtype}",
                (
                    f"{layer.autocast.in_dtype} → {layer.autocast.out_dtype}{kept_mark(layer)}"
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
            self.setItem(row, KEEP_COLUMN, self.keepColumn.item(layer.name))
        self._kinds = {layer.name: layer.kind for layer in result.layers}
        self._show_checks(parse_patterns(self.keepEdit.text()))
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
        """The table's text, row by row (for tests and copy/paste); the check boxes' cells have
        none ('': their checks are `kept_rows()`)."""
        return [row_texts(self, r) for r in range(self.rowCount())]

    def kept_rows(self) -> list[bool]:
        """Each row's "Keep in float32" check: what the next run keeps."""
        return self.keepColumn.kept_rows()

    # ---- the keep set: field and checks -> state ---------------------------------------------
    def binding(self) -> Binding:
        """The patterns field bound to `keep_float32` (`bind` the call its edits make)."""
        return Binding(
            KEEP_FIELD, frozenset({KEEP_FIELD}), self._read_keep, self._write_keep, (self.keepEdit,)
        )

    def bind(self, edited: Callable[[], None]) -> None:
        """Call `edited` on each edit of the field (the bindings then set the state)."""
        self._edited = edited

    def show_message(self, text: str) -> None:
        """Show `text` under the patterns field ('' hides it)."""
        self.keepHeader.show_message(text)

    @Slot(str)
    def show_failure(self, message: str) -> None:
        """A run that failed on the keep set ("keep_float32: …") says why under the field."""
        prefix = f"{KEEP_FIELD}: "
        if message.startswith(prefix):
            self.show_message(message[len(prefix) :])

    def _read_keep(self) -> dict[str, Any]:
        return {KEEP_FIELD: parse_patterns(self.keepEdit.text())}

    @Slot(str)
    def _on_keep_text(self, text: str) -> None:
        if self._writing:
            return
        self._edited()
        typed = parse_patterns(text)
        refusal = self._keep_rule.refuse(typed, None) if self._keep_rule else None
        self.show_message(refusal or "")  # refused: pending in the bindings, Run off
        if refusal is None:
            self._show_checks(typed)

    @Slot(int, bool)
    def _on_keep_toggled(self, row: int, kept: bool) -> None:
        name = cell(self, row, 0).text()
        patterns = parse_patterns(self.keepEdit.text())
        if kept and not covering(patterns, name, self._kinds):
            patterns = (*patterns, name)
        elif not kept:
            patterns = tuple(p for p in patterns if p != name)
        self.keepEdit.setText(patterns_text(patterns))  # an edit: the state follows
        still = covering(patterns, name, self._kinds)
        if not kept and still:
            self._show_checks(patterns)  # the check the patterns overrule goes back
            self.show_message(
                f"{name} stays kept: the pattern {still[0]!r} names it or a module around it "
                "(edit the patterns to let it go)."
            )

    # ---- state -> field and checks ------------------------------------------------------------
    def _write_keep(self, config: ExperimentConfig) -> None:
        """Show the config's keep set (set from elsewhere: a preset, `set_config`)."""
        self._writing = True
        try:
            self.keepEdit.setText(patterns_text(config.keep_float32))
        finally:
            self._writing = False
        self._show_checks(config.keep_float32)
        self.show_message("")

    def _show_checks(self, patterns: tuple[str, ...]) -> None:
        names = [cell(self, row, 0).text() for row in range(self.rowCount())]
        self.keepColumn.show_kept([bool(covering(patterns, name, self._kinds)) for name in names])
