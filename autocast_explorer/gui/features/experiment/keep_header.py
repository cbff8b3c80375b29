"""The Layers table's header, with the patterns the next run keeps in float32 above its
sections: the Layers tab is the table itself, so the field lives in the table's top margin.

The bar sits in the header's own top margin (its viewport, where the sections are drawn and
scrolled, starts below it), so the field stays put while the columns scroll sideways.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QTableWidget, QVBoxLayout, QWidget

from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.tables import WrappingHeader

PLACEHOLDER = "layer paths or classes, e.g. fc2, LayerNorm, encoder.layer.*.attention"


class KeepHeader(WrappingHeader):
    """A horizontal header with the patterns field (`keepFloat32Edit`) and its message
    (`keepFloat32Error`, hidden while empty) above the sections; its titles wrap within their
    sections (WrappingHeader)."""

    def __init__(self, parent: QTableWidget, tip: str) -> None:
        super().__init__(parent)
        self.bar = QWidget(self)
        self.keepEdit = QLineEdit(self.bar)
        self.keepEdit.setObjectName("keepFloat32Edit")
        self.keepEdit.setPlaceholderText(PLACEHOLDER)
        self.keepEdit.setClearButtonEnabled(True)
        self.keepEdit.setToolTip(tip)
        label = QLabel("&Keep in float32:", self.bar)
        label.setBuddy(self.keepEdit)
        label.setToolTip(tip)
        self.keepError = QLabel("", self.bar)
        self.keepError.setObjectName("keepFloat32Error")
        self.keepError.setWordWrap(True)
        self.keepError.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.keepError.setStyleSheet(
            f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 3px;"
        )
        self.keepError.hide()
        row = QHBoxLayout()
        row.addWidget(label)
        row.addWidget(self.keepEdit, 1)
        self._layout = column = QVBoxLayout(self.bar)
        column.setContentsMargins(4, 3, 4, 3)
        column.addLayout(row)
        column.addWidget(self.keepError)
        self._fit_bar()

    def show_message(self, text: str) -> None:
        """Show `text` under the field ('' hides it); the header grows to hold it."""
        self.keepError.setText(text)
        self.keepError.setVisible(bool(text))
        self._fit_bar()

    def _bar_height(self) -> int:
        layout = self._layout
        if layout.hasHeightForWidth():  # the message wraps at the header's width
            return layout.heightForWidth(max(self.width(), 200))
        return layout.sizeHint().height()

    def _fit_bar(self) -> None:
        height = self._bar_height()
        if self.viewportMargins().top() != height:
            self.setViewportMargins(0, height, 0, 0)
            self.geometriesChanged.emit()  # the table makes its top margin this much taller
        self.bar.setGeometry(0, 0, self.width(), height)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(hint.width(), hint.height() + self._bar_height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_bar()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # a new text scale
            self._fit_bar()
