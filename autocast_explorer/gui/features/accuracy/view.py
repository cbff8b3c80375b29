"""The Accuracy view: does autocast change a trained model's answers on real, held-out rows?

Both accuracies, the interval of their difference, the verdict (core's words), the flipped rows
(pictures for images, a table otherwise), a confusion of the flips (float32's answer → autocast's)
and the held-out accuracy per epoch. Every number is core's AccuracyReport / DataInfo.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.data.summary import answers_verdict, data_line, interval_text
from autocast_explorer.gui.charts.epoch_accuracy_chart import EpochAccuracyChart
from autocast_explorer.gui.features.accuracy.gallery import (
    FlipGallery,
    fill_flip_table,
    flip_table,
)
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import reflow_below

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.training import TrainReport

IDLE_TEXT = (
    "Does autocast change a trained model's answers? Choose Data: Handwritten digits (or your "
    "own file) and press Run (F5): the model is trained in float32, then the held-out rows are "
    "answered in float32 and under autocast, and every row whose answer changed is shown here."
)


def no_accuracy_text(train: TrainReport, dtype: str) -> str:
    """Why an MSE training run has no accuracy, and its held-out MSE (core's figures)."""
    text = f"There is no accuracy to show: {train.no_accuracy_reason()}."
    if train.held_out_loss:
        text += (
            f" Held-out MSE ({train.held_out_rows} rows) after {train.steps} steps: float32 "
            f"{train.held_out_loss['plain']:.4g} · {dtype} autocast "
            f"{train.held_out_loss['autocast']:.4g}. The chart shows both copies' training MSE "
            "per step."
        )
    return text


def _label(name: str, tip: str, rich: bool = True) -> QLabel:
    label = QLabel("")
    label.setObjectName(name)
    label.setToolTip(tip)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class AccuracyView(QWidget):
    """objectName `accuracyView`; children `accuracyHeadline`, `accuracySummary`,
    `flipGallery` (image rows) or `flipTable` (other rows), `flipConfusionTable`,
    `epochAccuracyPlot`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("accuracyView")
        layout = QVBoxLayout(self)
        self.accuracyHeadline = _label("accuracyHeadline", "Did autocast change the answers?")
        self.accuracyHeadline.setFont(style.text_font(13, bold=True))
        self.accuracySummary = _label(
            "accuracySummary",
            "Held-out accuracy in float32 and under autocast, and a 95% interval of their "
            "difference from a paired bootstrap over the held-out rows.",
        )
        layout.addWidget(self.accuracyHeadline)
        layout.addWidget(self.accuracySummary)

        flips = QGroupBox("Rows whose answer changed")
        self._flipParts: list[QWidget] = [flips]
        flips.setObjectName("flipBox")
        self.flipBox = flips  # what answers "which rows flipped?"
        flips_layout = QVBoxLayout(flips)
        self.flipGallery = FlipGallery()
        self.flipTable = flip_table(
            "flipTable", "Flipped rows of data that are not images: both answers and margins."
        )
        scroll = QScrollArea()
        scroll.setObjectName("flipScroll")
        scroll.setWidgetResizable(True)
        holder = QWidget()
        holder_layout = QVBoxLayout(holder)
        holder_layout.addWidget(self.flipGallery)
        holder_layout.addWidget(self.flipTable)
        holder_layout.addStretch(1)
        scroll.setWidget(holder)
        self.flipNote = _label("flipNote", "How many rows flipped, and how many are shown.")
        flips_layout.addWidget(self.flipNote)
        flips_layout.addWidget(scroll, 1)

        side = QVBoxLayout()
        self.flipConfusionTable = QTableWidget(0, 0)
        self.flipConfusionTable.setObjectName("flipConfusionTable")
        self.flipConfusionTable.setToolTip(
            "Confusion of the flips: a row for float32's answer, a column for autocast's; each "
            "cell counts the held-out rows that went from one to the other."
        )
        self.flipConfusionTable.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.flipConfusionTable.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.flipConfusionTable.setMinimumHeight(120)
        self.epochAccuracyPlot = EpochAccuracyChart()
        confusion_title = QLabel("Flips: float32's answer (rows) → autocast's (columns)")
        confusion_title.setToolTip(self.flipConfusionTable.toolTip())
        self._flipParts += [confusion_title, self.flipConfusionTable]
        side.addWidget(confusion_title)
        side.addWidget(self.flipConfusionTable, 1)
        side.addWidget(self.epochAccuracyPlot, 2)

        body = QHBoxLayout()
        body.addWidget(flips, 3)
        body.addLayout(side, 2)
        reflow_below(body, 640)
        layout.addLayout(body, 1)
        self.clear()

    def show_result(self, result: ExperimentResult) -> None:
        self.epochAccuracyPlot.show_result(result)
        info, acc = result.data, result.accuracy
        self.flipGallery.clear()
        self.flipTable.setRowCount(0)
        self.flipConfusionTable.clear()
        self.flipConfusionTable.setRowCount(0)
        self.flipConfusionTable.setColumnCount(0)
        # An MSE run has no answers to flip: only its losses.
        train = result.train if info is None else None
        no_accuracy = train is not None and not train.has_accuracy
        for part in self._flipParts:
            part.setVisible(not no_accuracy)
        if train is not None and no_accuracy:
            self._idle(html.escape(no_accuracy_text(train, result.config.dtype)))
            self.accuracyHeadline.setText("No accuracy: this model trained with MSE")
            return
        if info is None:
            self._idle(IDLE_TEXT)
            return
        if acc is None:
            why = (
                "Training mode compares two separately trained copies: their per-epoch accuracy "
                "is in the chart; run in Inference mode to see which rows flip."
                if result.train is not None
                else "The autocast forward raised, so there are no autocast answers to compare."
            )
            self._idle(f"{html.escape(data_line(info))}. {why}")
            return
        self.accuracyHeadline.setText(html.escape(answers_verdict(acc)))
        self.accuracySummary.setText(
            f"{html.escape(data_line(info))}.<br>"
            f"Held-out accuracy: float32 <b>{acc.plain:.2%}</b> · {acc.dtype} autocast "
            f"<b>{acc.autocast:.2%}</b> · difference {html.escape(interval_text(acc))}."
        )
        shown = len(acc.flipped)
        note = f"{acc.flipped_total} of {acc.rows:,} rows changed their answer"
        if shown < acc.flipped_total:
            note += f" (the first {shown} are kept)"
        note += (
            ". Green: the right answer; red: a wrong one. Hover for both margins."
            if acc.flipped_total
            else "."
        )
        self.flipNote.setText(html.escape(note))
        image = info.image and len(info.shape) == 3
        self.flipGallery.setVisible(image)
        self.flipTable.setVisible(not image and bool(acc.flipped))
        if image:
            self.flipGallery.show_flips(acc, info.shape)
        else:
            fill_flip_table(self.flipTable, acc)
        self._fill_confusion(acc.confusion())

    def _fill_confusion(self, confusion: dict[tuple[int, int], int]) -> None:
        rows = sorted({p for p, _ in confusion})
        cols = sorted({a for _, a in confusion})
        table = self.flipConfusionTable
        table.setRowCount(len(rows))
        table.setColumnCount(len(cols))
        table.setVerticalHeaderLabels([f"fp32 {r}" for r in rows])
        table.setHorizontalHeaderLabels([f"→ {c}" for c in cols])
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                count = confusion.get((r, c), 0)
                item = QTableWidgetItem(str(count) if count else "")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                table.setItem(i, j, item)

    def _idle(self, text: str) -> None:
        self.accuracyHeadline.setText("")
        self.accuracySummary.setText(text)
        self.flipNote.setText("")
        self.flipGallery.setVisible(False)
        self.flipTable.setVisible(False)

    def clear(self) -> None:
        for part in self._flipParts:
            part.setVisible(True)
        self.epochAccuracyPlot.clear()
        self.flipGallery.clear()
        self.flipTable.setRowCount(0)
        self.flipConfusionTable.setRowCount(0)
        self.flipConfusionTable.setColumnCount(0)
        self._idle(IDLE_TEXT)
