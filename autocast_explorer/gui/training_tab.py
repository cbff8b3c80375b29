"""Training mode in the window: the Training tab, its live loss curves and its chart export.

`install_training(window)` is the one call MainWindow makes. The window's runs stream each
training step's losses (core's StepProgress, plain data) as partial results; this module
routes them to the Training view and brings that view to the front when a training run starts.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from autocast_explorer.gui.training_view import TrainingView

if TYPE_CHECKING:
    from autocast_explorer.gui.main_window import MainWindow

TAB_TIP = (
    "Training mode: loss curves of a float32 and an autocast copy, memory saved for backward, "
    "gradient and per-layer dtypes."
)


class TrainingTab(QObject):
    """Connects the window's run signals to the Training view (slots on the GUI thread)."""

    def __init__(self, window: MainWindow, view: TrainingView) -> None:
        super().__init__(window)
        self._window = window
        self.view = view
        window.experimentStarted.connect(self._on_started)
        window.experimentStep.connect(self._on_step)

    @Slot()
    def _on_started(self) -> None:
        config = self._window.running_config()
        if config is None or config.mode != "train":
            return
        self.view.start(config)
        self._window.resultTabs.setCurrentWidget(self.view)

    @Slot(object)
    def _on_step(self, progress: object) -> None:
        self.view.add_step(progress)


def install_training(window: MainWindow) -> TrainingTab:
    """Add the Training tab, route streamed steps to it, and File › Export › Loss chart."""
    view = TrainingView()
    window.add_view(view, "Training")
    window.resultTabs.setTabToolTip(window.resultTabs.indexOf(view), TAB_TIP)
    window.trainingView = view
    window.lossPlot = view.lossPlot
    window.savedBytesPlot = view.savedBytesPlot
    export_menu = window.findChild(QMenu, "exportMenu")
    if export_menu is not None:
        for key, title, plot in (
            ("loss", "Training l&oss chart…", view.lossPlot),
            ("saved_bytes", "&Memory saved for backward chart…", view.savedBytesPlot),
        ):
            action = QAction(title, window)
            action.setObjectName(f"export_{key}")
            action.triggered.connect(functools.partial(window._export, plot, key))
            export_menu.addAction(action)
            window.exportActions[key] = action
        window._update_file_actions()
    return TrainingTab(window, view)
