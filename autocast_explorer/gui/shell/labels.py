"""The wrapping, selectable text label every panel shows its sentences in, and text that may
wrap inside a long code word."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy


def wrapping_label(name: str, tip: str, *, rich: bool = False, color: str = "") -> QLabel:
    """An empty word-wrapped label that asks the height its text needs (a page scrolls rather
    than cut it) and lets the reader select and copy the text."""
    label = QLabel("")
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setToolTip(tip)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.AutoText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    if color:
        label.setStyleSheet(f"color: {color};")
    return label


def breakable(text: str) -> str:
    """`text` with a zero-width space after each '.' and '(' inside a word, so a long code
    word (torch.autocast("cpu"),) can wrap in a narrow panel at large text sizes."""
    import re

    return re.sub(r"(?<=\w)([.(])(?=\S)", "\\1\u200b", text)
