"""A one-line label that elides what does not fit and keeps the whole text in its tooltip.

The status bar's verdict is a sentence that can be longer than a 1024 px window; a plain QLabel
would either widen the window or be cut mid-word at the edge. text() stays the whole sentence.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """Draws its text elided at the right ("…") when narrower than the text; the tooltip then
    starts with the whole text, followed by `about` (what the label is)."""

    def __init__(self, text: str = "", about: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.about = about
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(f"{text}\n\n{self.about}" if text and self.about else text or self.about)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def is_elided(self) -> bool:
        """True while the text is wider than the label (drawn with a trailing '…')."""
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def paintEvent(self, event: QPaintEvent) -> None:
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, rect.width()
        )
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(
            rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown
        )
        painter.end()
