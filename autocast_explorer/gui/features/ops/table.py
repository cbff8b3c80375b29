"""The Ops tab's policy table: its columns, and one row per category group or op.

Functions of a plain QTableWidget (its class is part of the tester's contract), so the panel
only decides when the rows are rebuilt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from autocast_explorer.core.numerics.opcategories import CATEGORIES
from autocast_explorer.gui.features.ops.notes import NOTE_BACKGROUND
from autocast_explorer.gui.features.ops.policies import DOCUMENTED_MEANINGS, policy_color
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.tables import cell, column_header

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.oppolicy import OpPolicy

CASE_COLUMNS = (
    ("float32", "fp32\nin →"),
    ("low", "low\nin →"),
    ("low_first", "low 1st\n+fp32 →"),
    ("float32_first", "fp32 1st\n+low →"),
)
#: Complex results are shown short so a cell fits ("complex64[float32]" → "c64[float32]").
COMPLEX_SHORT = {"complex32": "c32", "complex64": "c64", "complex128": "c128"}
CASE_TIPS = {
    "float32": "Output dtype with every floating input in float32.",
    "low": "Output dtype with every floating input in the autocast dtype.",
    "low_first": "Output dtype with the first input in the autocast dtype, the rest float32.",
    "float32_first": "Output dtype with the first input float32, the rest in the autocast dtype.",
}
OP_COLUMN_WIDTH = 205
ROW_HEIGHT = 22
#: Columns before the case columns.
OP_COL, POLICY_COL, DOCUMENTED_COL = 0, 1, 2
FIRST_CASE_COL = 3
COLUMNS = ("op", "policy", "documented", *(title for _case, title in CASE_COLUMNS))
GROUP_BACKGROUND = "#e8eaed"
DISAGREE_MARK = "⚠ "
#: Item data role holding the kind of row: "op" or "group".
ROW_KIND_ROLE = Qt.ItemDataRole.UserRole + 1
GROUP_TITLES: dict[str, str] = {"disagreements": "⚠ disagree with PyTorch's documentation"}


def _tinted(color: str, alpha: int = 80) -> QColor:
    tint = QColor(color)
    tint.setAlpha(alpha)
    return tint


def policy_table() -> QTableWidget:
    """objectName `opsPolicyTable`: read-only rows, each column as wide as its contents."""
    table = QTableWidget(0, len(COLUMNS))
    table.setObjectName("opsPolicyTable")
    table.setHorizontalHeaderLabels(COLUMNS)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
    table.setToolTip(
        "Each op under torch.autocast('cpu'), grouped by category: its measured policy, "
        "what PyTorch documents, and the output dtype for each input case (— : the op "
        "takes one floating input; bool[float32]: the dtype it computed in). ⚠ marks an "
        "op whose measurement contradicts its documentation; hover a row for why."
    )
    # Every column as wide as its header and cells (a narrow tab scrolls sideways instead
    # of eliding every case to "…"); the op column keeps a fixed, draggable width.
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(OP_COL, QHeaderView.ResizeMode.Interactive)
    header.resizeSection(OP_COL, OP_COLUMN_WIDTH)
    header.setStretchLastSection(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    column_header(table, DOCUMENTED_COL).setToolTip(
        "What PyTorch documents for the op: the AMP docs' CPU lists and torch's own "
        "AutocastCPUTestLists (read from the installed wheel). 'unlisted': on no list."
    )
    for c, (case, _title) in enumerate(CASE_COLUMNS, start=FIRST_CASE_COL):
        column_header(table, c).setToolTip(CASE_TIPS[case])
    return table


def fill_rows(table: QTableWidget, groups: list[tuple[str, list[OpPolicy]]], low: str) -> None:
    """A bold header row per group, then its ops (`low`: the autocast dtype probed)."""
    table.clearSpans()
    table.setRowCount(sum(1 + len(ops) for _group, ops in groups))
    row = 0
    for group, ops in groups:
        _group_row(table, row, group, ops)
        row += 1
        for op in ops:
            _op_row(table, row, op, low)
            row += 1


def fill_op_column(table: QTableWidget) -> None:
    """The op column takes the table's spare width, never less than OP_COLUMN_WIDTH: a wide
    window left an empty band right of the last column."""
    header = table.horizontalHeader()
    others = sum(header.sectionSize(c) for c in range(table.columnCount()) if c != OP_COL)
    header.resizeSection(OP_COL, max(OP_COLUMN_WIDTH, table.viewport().width() - others))


def _group_row(table: QTableWidget, row: int, group: str, ops: list[OpPolicy]) -> None:
    title = GROUP_TITLES.get(group) or CATEGORIES.get(group, group or "uncategorized")
    disagree = sum(op.disagrees for op in ops)
    extra = f", {disagree} ⚠" if disagree and group != "disagreements" else ""
    item = QTableWidgetItem(f"{title} ({len(ops)}{extra})")
    item.setData(ROW_KIND_ROLE, "group")
    item.setData(Qt.ItemDataRole.UserRole, group)
    item.setBackground(QColor(GROUP_BACKGROUND))
    font = QFont(table.font())
    font.setBold(True)
    item.setFont(font)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled)
    table.setItem(row, 0, item)
    for c in range(1, table.columnCount()):
        filler = QTableWidgetItem("")
        filler.setData(ROW_KIND_ROLE, "group")
        filler.setFlags(Qt.ItemFlag.ItemIsEnabled)
        table.setItem(row, c, filler)
    table.setSpan(row, 0, 1, table.columnCount())


def _op_row(table: QTableWidget, row: int, op: OpPolicy, low: str) -> None:
    bold = QFont(table.font())
    bold.setBold(True)
    name = QTableWidgetItem((DISAGREE_MARK if op.disagrees else "") + op.name)
    if op.disagrees:
        name.setBackground(QColor(NOTE_BACKGROUND))
        name.setFont(bold)
    policy = QTableWidgetItem(op.policy)
    policy.setBackground(QColor(policy_color(op.policy, low)))
    policy.setForeground(QColor("white"))
    policy.setFont(bold)
    policy.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
    doc = op.documented
    documented = QTableWidgetItem(doc.policy if doc else "?")
    documented.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
    if doc is None:
        documented.setToolTip("This probe file was written before documented policies.")
    else:
        lists = "; ".join(doc.lists) or "on no list"
        documented.setToolTip(
            f"{doc.name}: {DOCUMENTED_MEANINGS.get(doc.policy, doc.policy)} ({lists})"
        )
        if op.disagrees:
            documented.setForeground(QColor(style.BAD))
            documented.setFont(bold)
    tip = f"{op.name}: {op.policy}: {op.why}"
    if op.disagrees and doc is not None:
        tip += f"\n⚠ documented {doc.policy} ({doc.name}); see the notes for why."
    for item in (name, policy, documented):
        item.setData(ROW_KIND_ROLE, "op")
        item.setData(Qt.ItemDataRole.UserRole, op.name)
    for item in (name, policy):
        item.setToolTip(tip)
    table.setItem(row, OP_COL, name)
    table.setItem(row, POLICY_COL, policy)
    table.setItem(row, DOCUMENTED_COL, documented)
    for c, (case, _title) in enumerate(CASE_COLUMNS, start=FIRST_CASE_COL):
        item = _case_item(op, case)
        item.setData(ROW_KIND_ROLE, "op")
        table.setItem(row, c, item)


def _case_item(op: OpPolicy, case: str) -> QTableWidgetItem:
    c = op.case(case)
    if c is None:
        item = QTableWidgetItem("—")
        item.setToolTip("This op takes a single floating input: no mixed case.")
        item.setForeground(QColor(style.MUTED))
    elif c.error is not None:
        item = QTableWidgetItem("error")
        item.setForeground(QColor(style.BAD))
        item.setToolTip(f"inputs {', '.join(c.in_dtypes)}: {c.error}")
    else:
        text = c.cell_text()
        for long, short in COMPLEX_SHORT.items():
            text = text.replace(long, short)
        item = QTableWidgetItem(text)
        item.setBackground(_tinted(style.dtype_color(c.effective or "?")))
        computed = f", computed in {c.computed}" if c.computed else ""
        kernels = f"; dispatched {', '.join(c.kernels)}" if c.kernels else ""
        item.setToolTip(
            f"inputs {', '.join(c.in_dtypes)} → output {c.out_dtype}{computed}; "
            f"{c.casts} cast(s){kernels}"
        )
    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
    return item


def op_rows(table: QTableWidget) -> list[int]:
    """The rows that hold an op (not a group header), top to bottom."""
    return [
        r
        for r in range(table.rowCount())
        if (item := table.item(r, OP_COL)) is not None and item.data(ROW_KIND_ROLE) == "op"
    ]


def op_name(table: QTableWidget, row: int) -> str:
    """The op's own name on `row` (the cell's text may carry the ⚠ mark)."""
    return str(cell(table, row, OP_COL).data(Qt.ItemDataRole.UserRole))
