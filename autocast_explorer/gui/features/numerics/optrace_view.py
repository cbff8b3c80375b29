"""The "Op trace" tab: every aten op of one plain and one autocast forward, casts highlighted.

The records are core's (`result.op_trace`, core/optrace.py: a TorchDispatchMode below the
Autocast key, so it sees the casts autocast inserts). Casts are drawn bold on the autocast
dtype's color; "Casts only" hides the rest. Beside the list, "what autocast added" counts each
op in both forwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.gui.charts import formats
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import reflow_below
from autocast_explorer.gui.shell.tables import RestOfWidth, cell, column_header, row_texts

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.numerics.optrace import OpRecord, OpTrace

OP_COLUMNS = ("#", "Forward", "aten op", "in → out dtypes", "Shape", "Bytes")
ROW_HEIGHT = 22
ADDED_COLUMNS = ("aten op", "plain", "autocast", "added")
MODES = {"Both forwards": None, "plain only": "plain", "autocast only": "autocast"}
CAST_TINT_ALPHA = 110
IDLE = "Press Run (F5): the ops of one plain and one autocast forward are listed here."


def _dtypes(names: tuple[str, ...]) -> str:
    """Short names (fp32, bf16) so a three-input addmm still fits; full names in the tooltip."""
    return ", ".join(style.dtype_short(n) for n in names) if names else "—"


class OpTraceView(QWidget):
    """A result view (`show_result`, `clear`); objectName `opTraceView`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("opTraceView")
        self._records: list[OpRecord] = []
        self._cast_color = style.dtype_color("bfloat16")
        self.summaryLabel = QLabel(IDLE)
        self.summaryLabel.setObjectName("opTraceSummary")
        self.summaryLabel.setWordWrap(True)
        self.summaryLabel.setTextFormat(Qt.TextFormat.RichText)
        self.summaryLabel.setToolTip(
            "Counted by core.optrace with a TorchDispatchMode during one forward per mode, "
            "under torch.no_grad as the timed calls run."
        )
        figures = self._build_figures()
        filters = self._build_filters()
        self._build_tables()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summaryLabel)
        layout.addLayout(figures)
        layout.addWidget(self.gradModeLabel)
        layout.addWidget(self._build_splitter(filters), 1)
        self.clear()

    # ---- construction ----------------------------------------------------------------------
    def _build_figures(self) -> QHBoxLayout:
        """The two big numbers (casts inserted, bytes they wrote) and the inference-mode line."""
        self.castCountLabel = QLabel("—")
        self.castCountLabel.setObjectName("castCountLabel")
        self.castBytesLabel = QLabel("—")
        self.castBytesLabel.setObjectName("castBytesLabel")
        for label, tip in (
            (self.castCountLabel, "Dtype casts in the autocast forward (aten._to_copy …)."),
            (
                self.castBytesLabel,
                "Bytes the casts wrote: the low-precision copies of weights, biases and input.",
            ),
        ):
            font = label.font()
            font.setPointSize(14)
            font.setBold(True)
            label.setFont(font)
            label.setToolTip(tip)
        self.gradModeLabel = QLabel("")
        self.gradModeLabel.setObjectName("gradModeLabel")
        self.gradModeLabel.setWordWrap(True)
        self.gradModeLabel.setStyleSheet(f"color: {style.MUTED};")
        self.gradModeLabel.setToolTip(
            "The same autocast forward traced under torch.inference_mode, where composite ops "
            "reach the dispatch mode undecomposed (core/optrace.py)."
        )
        figures = QHBoxLayout()
        figures.addWidget(QLabel("Casts autocast inserted:"))
        figures.addWidget(self.castCountLabel)
        figures.addSpacing(16)
        figures.addWidget(QLabel("bytes written:"))
        figures.addWidget(self.castBytesLabel)
        figures.addStretch(1)
        reflow_below(figures, 520)
        return figures

    def _build_filters(self) -> QHBoxLayout:
        """Which forward's ops to list, casts only or all, and how many are shown."""
        self.modeCombo = QComboBox()
        self.modeCombo.setObjectName("opModeCombo")
        self.modeCombo.addItems(list(MODES))
        self.modeCombo.setToolTip("Show the ops of both forwards, or of one.")
        self.castsOnlyCheck = QCheckBox("Casts only")
        self.castsOnlyCheck.setObjectName("castsOnlyCheck")
        self.castsOnlyCheck.setToolTip("Hide every op that is not a dtype cast.")
        self.modeCombo.currentIndexChanged.connect(self._apply_filter)
        self.castsOnlyCheck.toggled.connect(self._apply_filter)
        self.shownLabel = QLabel("")
        self.shownLabel.setObjectName("opsShownLabel")
        self.shownLabel.setStyleSheet(f"color: {style.MUTED};")
        self.shownLabel.setWordWrap(True)  # a narrow tab wraps it rather than widen the page
        filters = QHBoxLayout()
        filters.addWidget(self.modeCombo)
        filters.addWidget(self.castsOnlyCheck)
        filters.addWidget(self.shownLabel, 1)
        return filters

    def _build_tables(self) -> None:
        """Every op in dispatch order, and the per-op counts of what autocast added."""
        self.opsTable = self._table("opsTable", OP_COLUMNS)
        self.opsTable.setToolTip(
            "Every aten op in dispatch order. Bold rows on the low-precision color are casts "
            "(an aten._to_copy-like op whose output dtype differs from its input's)."
        )
        header = self.opsTable.horizontalHeader()
        # Every column fits its contents; the op name takes what is left, never less.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._opsWidth = RestOfWidth(self.opsTable, OP_COLUMNS.index("aten op"))
        column_header(self.opsTable, 5).setToolTip(
            "Bytes a cast wrote (its low-precision copy); empty for ops that are not casts."
        )
        self.addedTable = self._table("addedTable", ADDED_COLUMNS)
        self.addedTable.setToolTip(
            "How often each op ran in one plain and one autocast forward; 'added' is what "
            "autocast dispatched on top of the plain forward."
        )
        header = self.addedTable.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._addedWidth = RestOfWidth(self.addedTable, ADDED_COLUMNS.index("aten op"))

    def _build_splitter(self, filters: QHBoxLayout) -> QSplitter:
        """The filtered op list beside "what autocast added" (stacked in a narrow tab)."""
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(filters)
        left_layout.addWidget(self.opsTable, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        added_title = QLabel("<b>What autocast added</b> (calls per forward)")
        added_title.setToolTip(self.addedTable.toolTip())
        right_layout.addWidget(added_title)
        right_layout.addWidget(self.addedTable, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("opTraceSplitter")
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([590, 330])
        reflow_below(splitter, 640)
        return splitter

    def _table(self, name: str, columns: tuple[str, ...]) -> QTableWidget:
        table = QTableWidget(0, len(columns))
        table.setObjectName(name)
        table.setHorizontalHeaderLabels(columns)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        return table

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        trace = result.op_trace
        if trace is None:
            self._fill([], None, result.config.dtype)
            self.summaryLabel.setText(
                "No op trace: the autocast forward raised (see the Overview)."
                if result.autocast_error
                else "This result has no op trace (saved by an older version)."
            )
            return
        self._fill(list(trace.records), trace, result.config.dtype)

    def clear(self) -> None:
        self._fill([], None, "bfloat16")
        self.summaryLabel.setText(IDLE)

    def _fill(self, records: list[OpRecord], trace: OpTrace | None, dtype: str) -> None:
        self._records = records
        self._cast_color = style.dtype_color(dtype)
        tint = QColor(self._cast_color)
        tint.setAlpha(CAST_TINT_ALPHA)
        bold = QFont(self.opsTable.font())
        bold.setBold(True)
        table = self.opsTable
        table.setRowCount(len(records))
        index = {"plain": 0, "autocast": 0}
        for r, rec in enumerate(records):
            index[rec.mode] = index.get(rec.mode, 0) + 1
            values = (
                str(index[rec.mode]),
                rec.mode,
                rec.op,
                f"{_dtypes(rec.in_dtypes)} → {_dtypes(rec.out_dtypes)}",
                formats.shape(rec.shape),
                f"{rec.bytes:,}" if rec.cast else "",
            )
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                if c in (0, 5):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                item.setToolTip(
                    f"{rec.op} ({rec.mode} forward): inputs "
                    + ", ".join(
                        f"{d} {formats.shape(s)}"
                        for d, s in zip(rec.in_dtypes, rec.in_shapes, strict=False)
                    )
                    + f" → {', '.join(rec.out_dtypes) or 'no tensor'}"
                    + (
                        f"; a cast writing {formats.bytes_text(rec.bytes)}, reading "
                        f"{formats.bytes_text(rec.bytes_read)}"
                        if rec.cast
                        else ""
                    )
                    + (
                        f", of the parameter {rec.source}"
                        + (f" ({rec.source_kind})" if rec.source_kind else "")
                        if rec.source
                        else ""
                    )
                )
                if rec.cast:
                    item.setBackground(tint)
                    item.setFont(bold)
                table.setItem(r, c, item)
        self._fill_added(trace)
        if trace is None:
            self.castCountLabel.setText("—")
            self.castBytesLabel.setText("—")
            self.gradModeLabel.setText("")
        else:
            casts = trace.casts
            plain_n, auto_n = len(trace.plain), len(trace.autocast)
            self.castCountLabel.setText(f"{casts.count:,}")
            self.castBytesLabel.setText(formats.bytes_text(casts.bytes))
            names = ", ".join(f"{op} ×{n}" for op, n in casts.by_op.items()) or "none"
            self.summaryLabel.setText(
                f"The autocast forward dispatched <b>{auto_n}</b> aten ops, the plain one "
                f"<b>{plain_n}</b>. Autocast's casts ({names}, under torch.{trace.grad_mode}) "
                f"read {formats.bytes_text(casts.bytes_read)} of float32 and wrote "
                f"{dtype} copies."
            )
            self.gradModeLabel.setText(self._grad_mode_sentence(trace))
        self._apply_filter()
        self._opsWidth.fit()
        self._addedWidth.fit()

    def _grad_mode_sentence(self, trace: OpTrace) -> str:
        other = trace.casts_by_grad_mode.get("inference_mode")
        if other is None or trace.grad_mode == "inference_mode":
            return ""
        ops = ", ".join(f"{op} ×{n}" for op, n in other.by_op.items()) or "no op"
        same = other.count == trace.casts.count and other.bytes == trace.casts.bytes
        if same:
            return (
                f"Under torch.inference_mode the same {other.count} casts appear as {ops} "
                f"(same bytes): composite ops reach the tracer undecomposed there."
            )
        return (
            f"Under torch.inference_mode the tracer saw {other.count} casts ({ops}, "
            f"{formats.bytes_text(other.bytes)}) instead."
        )

    def _fill_added(self, trace: OpTrace | None) -> None:
        counts = list(trace.counts) if trace is not None else []
        counts.sort(key=lambda c: -c.added)
        table = self.addedTable
        table.setRowCount(len(counts))
        bold = QFont(table.font())
        bold.setBold(True)
        tint = QColor(self._cast_color)
        tint.setAlpha(CAST_TINT_ALPHA)
        for r, count in enumerate(counts):
            values = (count.op, str(count.plain), str(count.autocast), f"{count.added:+d}")
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if count.added:
                    item.setFont(bold)
                    if count.added > 0:
                        item.setBackground(tint)
                table.setItem(r, c, item)

    # ---- filters -------------------------------------------------------------------------
    @Slot()
    def _apply_filter(self, *_args: object) -> None:
        mode = MODES[self.modeCombo.currentText()]
        casts_only = self.castsOnlyCheck.isChecked()
        shown = 0
        for r, rec in enumerate(self._records):
            hide = (mode is not None and rec.mode != mode) or (casts_only and not rec.cast)
            self.opsTable.setRowHidden(r, hide)
            shown += not hide
        total = len(self._records)
        self.shownLabel.setText(f"{shown} of {total} ops shown" if total else "")

    # ---- read-back for tests -------------------------------------------------------------
    def op_rows(self, visible_only: bool = False) -> list[tuple[str, ...]]:
        t = self.opsTable
        return [
            row_texts(t, r) for r in range(t.rowCount()) if not (visible_only and t.isRowHidden(r))
        ]

    def highlighted(self) -> list[bool]:
        """Per row of the ops table: drawn as a cast (bold on the cast color)?"""
        t = self.opsTable
        flags = []
        for r in range(t.rowCount()):
            item = cell(t, r, 2)
            brush: QBrush = item.background()
            tinted = brush.style() != Qt.BrushStyle.NoBrush and (
                brush.color().name() == QColor(self._cast_color).name()
            )
            flags.append(item.font().bold() and tinted)
        return flags

    def added_rows(self) -> list[tuple[str, ...]]:
        t = self.addedTable
        return [row_texts(t, r) for r in range(t.rowCount())]
