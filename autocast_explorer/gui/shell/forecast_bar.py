"""The question a long run asks before it starts: its forecast, with "Run anyway" and Cancel.

The engine says a run's forecast before it builds anything (core.experiment.forecast); over
ANNOUNCE_ABOVE_S the window shows it here, under Run, and the run waits for the answer. The
words are core's (`Forecast.text()`); this bar only shows them and hears the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.forecast import Forecast


class ForecastBar(QFrame):
    """Hidden until `ask(forecast)`; then `runAnyway` or `declined` when a button is pressed
    (it hides itself either way). Its objectNames: forecastBar, forecastText, runAnywayButton,
    forecastCancelButton; with a `prefix` ("sweep"), sweepForecastBar and so on."""

    runAnyway = Signal()
    declined = Signal()

    def __init__(self, prefix: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)

        def named(base: str) -> str:
            return prefix + base[0].upper() + base[1:] if prefix else base

        self.setObjectName(named("forecastBar"))
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        self.forecastText = QLabel("")
        self.forecastText.setObjectName(named("forecastText"))
        self.forecastText.setWordWrap(True)
        self.forecastText.setStyleSheet(f"color: {style.MUTED};")
        layout.addWidget(self.forecastText)
        buttons = QHBoxLayout()
        self.runAnywayButton = QPushButton("Run anyway")
        self.runAnywayButton.setObjectName(named("runAnywayButton"))
        self.runAnywayButton.setToolTip("Start this run although it is forecast to take long.")
        self.cancelButton = QPushButton("Cancel")
        self.cancelButton.setObjectName(named("forecastCancelButton"))
        self.cancelButton.setToolTip("Do not start it: nothing has been built or run yet.")
        buttons.addWidget(self.runAnywayButton, 1)
        buttons.addWidget(self.cancelButton, 1)
        layout.addLayout(buttons)
        self.runAnywayButton.clicked.connect(self._run_anyway)
        self.cancelButton.clicked.connect(self._decline)
        self.hide()

    def ask(self, forecast: Forecast) -> None:
        """Show `forecast` and wait for a button."""
        self.forecastText.setText(forecast.sentence())
        self.show()
        self.runAnywayButton.setFocus()

    def _run_anyway(self) -> None:
        self.hide()
        self.runAnyway.emit()

    def _decline(self) -> None:
        self.hide()
        self.declined.emit()
