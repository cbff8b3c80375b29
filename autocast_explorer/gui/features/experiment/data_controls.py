"""The data inputs: synthetic, the bundled digits or a file, and optional trained weights.

`dataCombo` lists synthetic, the digits, the files chosen so far and "File…" (a dialog); the
weights row picks a state dict. The panel places them beside the epochs and shows the rows
real data uses; the data and weights are bound together, as synthetic data takes no weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import data_fitting_words
from autocast_explorer.gui.features.experiment.bindings import Binding
from autocast_explorer.gui.shell import style

#: The data selector's fixed items: (shown text, config.data); files are added as chosen.
DATA_ITEMS = (("Synthetic (random inputs)", "synthetic"), ("Handwritten digits", "digits"))
DATA_FILE_ITEM = ("File…", "")
DATA_FILTER = "Arrays x and y (*.npz *.safetensors *.pt)"
CHECKPOINT_FILTER = "State dict (*.safetensors *.pt)"


def data_note() -> str:
    """What the data sets of the config, by family that takes rows (the family registry's)."""
    return (
        f"The model's input ({data_fitting_words()}) and its classes are taken from the data "
        "when the run starts."
    )


class DataControls(QObject):
    """dataCombo, the note under it, and the weights row (checkpointEdit and its button)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dataCombo = QComboBox()
        self.dataCombo.setObjectName("dataCombo")
        for text, value in (*DATA_ITEMS, DATA_FILE_ITEM):
            self.dataCombo.addItem(text, value)
        self.dataCombo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._data_index = 0
        self._choosing = False
        # Not `activated` (a person's choice only): setCurrentIndex opens the dialog too.
        self.dataCombo.currentIndexChanged.connect(self._on_chosen)
        self.dataNote = QLabel(data_note())
        self.dataNote.setObjectName("dataNote")
        self.dataNote.setWordWrap(True)
        self.dataNote.setStyleSheet(f"color: {style.MUTED};")
        self.checkpointEdit = QLineEdit()
        self.checkpointEdit.setObjectName("checkpointEdit")
        self.checkpointEdit.setPlaceholderText("none: train here")
        self.checkpointEdit.setClearButtonEnabled(True)
        self.checkpointButton = QToolButton()
        self.checkpointButton.setObjectName("checkpointButton")
        self.checkpointButton.setText("…")
        self.checkpointButton.setToolTip("Choose a weights file (.safetensors or .pt).")
        self.checkpointButton.clicked.connect(self._choose_checkpoint)
        self.checkpointRow = QWidget()
        row = QHBoxLayout(self.checkpointRow)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.checkpointEdit, 1)
        row.addWidget(self.checkpointButton)

    def data(self) -> str:
        """config.data as the selector shows it: synthetic, digits or a file's path."""
        return str(self.dataCombo.currentData() or "synthetic")

    def set_data(self, data: str) -> None:
        """Select `data`, adding a file's item (its name, the path as data) when it is new."""
        index = self.dataCombo.findData(data)
        if index < 0:
            index = self.dataCombo.count() - 1  # before "File…"
            self.dataCombo.insertItem(index, Path(data).name, data)
            self.dataCombo.setItemData(index, data, Qt.ItemDataRole.ToolTipRole)
        self.dataCombo.setCurrentIndex(index)
        self._data_index = index

    def binding(self) -> Binding:
        """The data and the weights, as one binding: synthetic data takes no weights (the
        typed path stays in its field for when real data comes back)."""

        def read() -> dict[str, Any]:
            data = self.data()
            checkpoint = self.checkpointEdit.text().strip() if data != "synthetic" else ""
            return {"data": data, "checkpoint": checkpoint}

        def write(config: ExperimentConfig) -> None:
            self.set_data(config.data)
            self.checkpointEdit.setText(config.checkpoint)

        widgets = (self.dataCombo, self.checkpointEdit)
        return Binding("data", frozenset({"data", "checkpoint"}), read, write, widgets)

    @Slot(int)
    def _on_chosen(self, index: int) -> None:
        """ "File…" opens a dialog however it is chosen (a click, a key, setCurrentIndex);
        cancelling it keeps the data that was selected."""
        if self._choosing:  # the file's item inserted, or the old choice back: no new dialog
            return
        if self.dataCombo.itemData(index) != DATA_FILE_ITEM[1]:
            self._data_index = index
            return
        self._choosing = True
        try:
            path, _ = QFileDialog.getOpenFileName(
                self.dataCombo, "Open data", str(Path.cwd()), DATA_FILTER
            )
            if path:
                self.set_data(path)
            else:
                self.dataCombo.setCurrentIndex(self._data_index)
        finally:
            self._choosing = False

    @Slot()
    def _choose_checkpoint(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.checkpointButton, "Open trained weights", str(Path.cwd()), CHECKPOINT_FILTER
        )
        if path:
            self.checkpointEdit.setText(path)
