"""The window's message banner: a label that never takes more text than a person can read.

Messages carry text from files, settings and torch (a 2 MB error, a 10 MB stored value); laid
out whole, such a text stalls the window for seconds or minutes. Every text set here is cut
by core's cap_text ("… N more characters"), whoever sets it.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from autocast_explorer.core.documents.reader import cap_text


class BannerLabel(QLabel):
    """A QLabel whose setText caps its text (core.documents.reader.MAX_SHOWN_CHARS)."""

    def setText(self, text: str) -> None:
        super().setText(cap_text(text))
