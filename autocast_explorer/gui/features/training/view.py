"""The Training view: loss curves (live), memory saved for backward, gradient and layer dtypes.

A result view like the others (`show_result`, `clear`), plus `start(config)` and
`add_step(progress)` for the live curves. Every figure comes from core's TrainReport; the
sentences under the charts are core.experiment.summary.training_lines, so the window and the
CLI say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.gui.charts.loss_chart import LossChart
from autocast_explorer.gui.charts.saved_bytes_chart import SavedBytesChart
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import reflow_below

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.training import StepProgress

GRAD_COLUMNS = ("Parameter", "Gradient: float32 run", "Gradient: autocast run")
LAYER_COLUMNS = (
    "Layer",
    "Kind",
    "Forward plain",
    "Forward autocast",
    "Backward plain",
    "Backward autocast",
)
IDLE_TEXT = (
    "Training mode trains two copies of the model side by side,\n"
    "from the same weights on the same batches: one in float32, one under autocast.\n"
    "Choose Mode: Training and press Run (F5)."
)


def _table(columns: tuple[str, ...], name: str, tip: str) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setToolTip(tip)
    table.setHorizontalHeaderLabels(columns)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table


def _dtype_item(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    first = text.split(" ")[0]
    if first in style.DTYPE_COLORS:
        item.setForeground(QColor(style.dtype_color(first)))
    return item


class TrainingView(QWidget):
    """objectName `trainingView`; children `lossPlot`, `savedBytesPlot`, `gradDtypeTable`,
    `trainLayerTable`, `trainingSummary`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainingView")
        self.lossPlot = LossChart()
        self.savedBytesPlot = SavedBytesChart()
        self.summary = QLabel(IDLE_TEXT)
        self.summary.setObjectName("trainingSummary")
        # Wrapped: at 1024 px the summary's long lines ran past the right edge of its pane.
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setToolTip("What the training run measured, in words (as the CLI prints).")
        self.gradTable = _table(
            GRAD_COLUMNS,
            "gradDtypeTable",
            "The dtype of each parameter's gradient after one backward, in each run. The "
            "parameters are float32, so autocast's gradients land in float32 too.",
        )
        self.layerTable = _table(
            LAYER_COLUMNS,
            "trainLayerTable",
            "Each layer's dtypes in a training step: forward input → output, and in the backward "
            "the gradient arriving at its output → the gradient it passes to its input "
            "('none': the model's input needs no gradient; 'unseen': torch called no backward "
            "hook for the layer: it returns an object, not tensors, or the loss does not use "
            "its output).",
        )
        self.summary.setFont(style.text_font(9, monospace=True))
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        summary_scroll = QScrollArea()
        summary_scroll.setWidget(self.summary)
        summary_scroll.setWidgetResizable(True)
        self.lossPlot.setMinimumWidth(300)  # stacked over the memory chart in a narrow tab
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.lossPlot)
        charts.addWidget(self.savedBytesPlot)
        charts.setStretchFactor(0, 3)
        charts.setStretchFactor(1, 1)
        reflow_below(charts, 640)
        tables = QSplitter(Qt.Orientation.Vertical)
        tables.addWidget(self.gradTable)
        tables.addWidget(self.layerTable)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(summary_scroll)
        bottom.addWidget(tables)
        bottom.setStretchFactor(0, 1)
        bottom.setStretchFactor(1, 1)
        bottom.setSizes([460, 460])
        reflow_below(bottom, 640)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(charts)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([420, 280])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)

    # ---- live -------------------------------------------------------------------------------
    def start(self, config: ExperimentConfig) -> None:
        """A training run of `config` has started: empty curves sized for its steps."""
        self.clear()
        self.lossPlot.start(config.steps, config.dtype)
        self.summary.setText(
            f"Training two copies for {config.steps} steps ({config.optimizer}, lr "
            f"{config.lr:g}); float32 vs autocast {config.dtype}…"
        )

    def add_step(self, progress: StepProgress) -> None:
        self.lossPlot.add_step(progress)

    # ---- result view ------------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        from autocast_explorer.core.experiment.summary import training_lines

        train = result.train
        if train is None:
            self.clear()
            return
        self.lossPlot.show_result(result)
        self.savedBytesPlot.show_result(result)
        self.summary.setText("\n".join(line.strip() for line in training_lines(result) if line))
        names = list(dict.fromkeys([*train.grad_dtypes_plain, *train.grad_dtypes]))
        self.gradTable.setRowCount(len(names))
        for row, name in enumerate(names):
            self.gradTable.setItem(row, 0, QTableWidgetItem(name))
            self.gradTable.setItem(row, 1, _dtype_item(train.grad_dtypes_plain.get(name, "—")))
            self.gradTable.setItem(row, 2, _dtype_item(train.grad_dtypes.get(name, "—")))
        self.layerTable.setRowCount(len(train.layers))
        for row, layer in enumerate(train.layers):
            cells = [
                layer.name,
                layer.kind,
                *(" → ".join(layer.forward[m]) for m in ("plain", "autocast")),
                *(" → ".join(layer.backward[m]) for m in ("plain", "autocast")),
            ]
            for col, text in enumerate(cells):
                self.layerTable.setItem(row, col, _dtype_item(text))

    def clear(self) -> None:
        self.lossPlot.clear()
        self.savedBytesPlot.clear()
        self.summary.setText(IDLE_TEXT)
        self.gradTable.setRowCount(0)
        self.layerTable.setRowCount(0)
