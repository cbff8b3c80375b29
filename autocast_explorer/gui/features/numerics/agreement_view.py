"""The "Agreement" tab: top-1 and top-k agreement, the allclose verdict, which rows flipped.

Three cards across the top (top-1, top-k with k from the Top-k control, allclose with the
atol/rtol it used), the flip-rate-by-margin chart, and the table of flipped rows with their
float32 margin. Every number is `result.agreement`'s (core/agreement.py, core/flips.py); the
histogram of |plain − autocast| stays in the Overview tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
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
from autocast_explorer.gui.charts.flip_chart import FlipRateChart
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import reflow_below
from autocast_explorer.gui.shell.tables import cell, row_texts

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.agreement import Agreement
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.numerics.flips import Flip

FLIP_COLUMNS = ("Row", "float32\nclass", "autocast\nclass", "float32\nmargin")
ROW_HEIGHT = 22
MARGIN_TIP = "float32 margin: the row's top-1 logit minus its top-2 logit in the float32 run."


class Card(QFrame):
    """A titled figure: a big value and a line of detail, for reading across a room."""

    def __init__(self, name: str, title: str, tooltip: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            f"#{name} {{ background: white; border: 1px solid #d0d4da; border-radius: 6px; }}"
        )
        self.setToolTip(tooltip)
        self.title = QLabel(f"<b>{title}</b>")
        self.title.setStyleSheet(f"color: {style.MUTED};")
        self.value = QLabel("—")
        self.value.setObjectName(f"{name}Value")
        font = self.value.font()
        font.setPointSize(18)
        font.setBold(True)
        self.value.setFont(font)
        self.detail = QLabel("")
        self.detail.setObjectName(f"{name}Detail")
        self.detail.setWordWrap(True)
        self.detail.setStyleSheet(f"color: {style.TEXT};")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.value)
        layout.addWidget(self.detail)

    def set(self, value: str, detail: str, color: str = style.TEXT) -> None:
        self.value.setText(value)
        self.value.setStyleSheet(f"color: {color};")
        self.detail.setText(detail)


class AgreementView(QWidget):
    """A result view (`show_result`, `clear`); objectName `agreementView`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agreementView")
        self.top1Card = Card(
            "top1Card",
            "Top-1 agreement",
            "Rows whose predicted class (argmax of the logits) is the same with and without "
            "autocast.",
        )
        self.topkCard = Card(
            "topkCard",
            "Top-k agreement",
            "Rows whose float32 class is among autocast's k highest logits (k: Top-k, under "
            "Advanced on the left), and how much the two top-k sets overlap on average.",
        )
        self.allcloseCard = Card(
            "allcloseCard",
            "allclose",
            "torch.allclose(plain, autocast, atol, rtol) over every logit: |plain − autocast| ≤ "
            "atol + rtol·|autocast| everywhere. Set atol and rtol on the left and Run again.",
        )
        cards = QHBoxLayout()
        cards.setSpacing(8)
        for card in (self.top1Card, self.topkCard, self.allcloseCard):
            cards.addWidget(card, 1)
        reflow_below(cards, 560)

        self.flipChart = FlipRateChart()
        self.flipChart.setMinimumWidth(300)  # stacked over the table in a narrow tab
        self.flipsLabel = QLabel("Flipped rows")
        self.flipsLabel.setObjectName("flipsLabel")
        self.flipsLabel.setWordWrap(True)
        self.flipsTable = QTableWidget(0, len(FLIP_COLUMNS))
        self.flipsTable.setObjectName("flipsTable")
        self.flipsTable.setHorizontalHeaderLabels(FLIP_COLUMNS)
        self.flipsTable.setToolTip(
            "Every row whose predicted class changed under autocast (the first 1000 are "
            "listed), with its classes in both runs. " + MARGIN_TIP
        )
        self.flipsTable.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.flipsTable.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.flipsTable.setAlternatingRowColors(True)
        self.flipsTable.verticalHeader().setVisible(False)
        self.flipsTable.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.flipsTable.setMinimumWidth(300)
        self.flipsTable.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        flips_box = QWidget()
        flips_layout = QVBoxLayout(flips_box)
        flips_layout.setContentsMargins(0, 0, 0, 0)
        flips_layout.addWidget(self.flipsLabel)
        flips_layout.addWidget(self.flipsTable, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("agreementSplitter")
        splitter.addWidget(self.flipChart)
        splitter.addWidget(flips_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([600, 320])
        reflow_below(splitter, 660)

        self.note = QLabel(
            "The histogram of |plain − autocast| over every logit is in the Overview tab."
        )
        self.note.setStyleSheet(f"color: {style.MUTED};")
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(cards)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.note)
        self.clear()

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        a = result.agreement
        if a is None:
            self.clear()
            self.top1Card.set("—", "the autocast forward raised: nothing to compare", style.BAD)
            self.flipChart.show_result(result)
            return
        flipped = a.rows - a.agree
        if a.no_argmax_reason:
            self.top1Card.set("no argmax", a.no_argmax_reason, style.MUTED)
            self.topkCard.set("—", "no predicted class, so no top-k", style.MUTED)
        else:
            self._show_classes(a, flipped)
        self.allcloseCard.set(
            "yes" if a.allclose else "no",
            f"atol {a.atol:g}, rtol {a.rtol:g} · max |diff| {formats.g3(a.max_abs_diff)} · "
            f"cosine {a.cosine:.6f}",
            style.OK if a.allclose else style.BAD,
        )
        self.flipChart.show_result(result)
        self._fill_flips(list(a.flips), flipped, a.topk is not None)

    def _show_classes(self, a: Agreement, flipped: int) -> None:
        """The top-1 and top-k cards of a classifier's logits."""
        self.top1Card.set(
            f"{a.agree}/{a.rows} rows",
            f"{formats.percent(a.fraction)} predict the same class"
            + (f"; {flipped} flipped" if flipped else ""),
            style.OK if flipped == 0 else style.BAD,
        )
        if a.topk is None:
            self.topkCard.set("—", "not measured in this result", style.MUTED)
        else:
            t = a.topk
            self.topkCard.set(
                f"top-{t.k}: {t.contains}/{a.rows}",
                f"float32's class within autocast's top {t.k}; top-{t.k} sets overlap "
                f"{formats.percent(t.overlap)}",
                style.OK if t.contains == a.rows else style.BAD,
            )

    def clear(self) -> None:
        idle = "Press Run (F5)"
        self.top1Card.set("—", idle, style.MUTED)
        self.topkCard.set("—", idle, style.MUTED)
        self.allcloseCard.set("—", idle, style.MUTED)
        self.flipChart.clear()
        self._fill_flips([], 0, True)
        self.flipsLabel.setText("<b>Flipped rows</b>")

    def _fill_flips(self, flips: list[Flip], flipped: int, measured: bool) -> None:
        table = self.flipsTable
        table.setRowCount(len(flips))
        for r, f in enumerate(flips):
            values = (str(f.row), str(f.plain_class), str(f.autocast_class), f"{f.margin:.4g}")
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 3:
                    item.setData(Qt.ItemDataRole.UserRole, f.margin)
                    item.setToolTip(MARGIN_TIP)
                table.setItem(r, c, item)
        if not measured:
            text = "<b>Flipped rows</b>: not listed in this result"
        elif flipped == 0:
            text = f"<b>Flipped rows</b>: <span style='color:{style.OK}'>none</span>"
        elif len(flips) < flipped:
            text = f"<b>Flipped rows</b>: {flipped} (the first {len(flips)} listed)"
        else:
            text = f"<b>Flipped rows</b>: {flipped}"
        self.flipsLabel.setText(text)

    # ---- read-back for tests -------------------------------------------------------------
    def flips_rows(self) -> list[tuple[str, ...]]:
        """The flipped-rows table's text, row by row."""
        t = self.flipsTable
        return [row_texts(t, r) for r in range(t.rowCount())]

    def flips_values(self) -> list[tuple[int, int, int, float]]:
        """(row, float32 class, autocast class, exact margin) as held by the table's items."""
        t = self.flipsTable
        return [
            (
                int(cell(t, r, 0).text()),
                int(cell(t, r, 1).text()),
                int(cell(t, r, 2).text()),
                float(cell(t, r, 3).data(Qt.ItemDataRole.UserRole)),
            )
            for r in range(t.rowCount())
        ]
