"""WindowHost: what the context needs of the window that assembles the features.

The context sits below the features and the window sits above them, so the context may not
import the window (not even for type checking). It is typed against this Protocol instead:
the window satisfies it structurally, and a test can hand the context any object that does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMenu, QStatusBar, QTabWidget, QWidget

if TYPE_CHECKING:
    from collections.abc import Callable

    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.gui.shell.actions import ActionRegistry
    from autocast_explorer.gui.shell.experiment_state import ExperimentState
    from autocast_explorer.gui.tasks.client import TaskRouter


class WindowHost(Protocol):
    """The window's side of the context: its controls and experiment state, tabs, runs, menus,
    exports, messages."""

    controls: Any  # the experiment controls (a QWidget with `dtypeCombo` and a layout)
    experiment_state: ExperimentState
    controlsColumn: QWidget
    environment: Environment | None
    task_router: TaskRouter
    last_result: ExperimentResult | None
    resultTabs: QTabWidget
    actions_registry: ActionRegistry
    exportActions: dict[str, QAction]
    messageBanner: QLabel

    def current_config(self) -> ExperimentConfig: ...
    def set_config(self, config: ExperimentConfig) -> None: ...
    def input_errors(self) -> dict[str, str]: ...
    def engine_ready(self) -> bool: ...
    def start_experiment(self) -> bool: ...
    def cancel_experiment(self) -> None: ...
    def show_result(self, result: ExperimentResult) -> None: ...
    def add_view(self, widget: QWidget, title: str) -> None: ...
    def menu(self, name: str) -> QMenu: ...
    def after_first_paint(self, job: Callable[[], None]) -> None: ...
    def add_chart_export(
        self, key: str, title: str, enabled_when: Callable[[], bool] | None
    ) -> QAction: ...
    def export_chart(self, key: str, path: str | Path) -> bool: ...
    def show_banner(self, text: str) -> None: ...
    def statusBar(self) -> QStatusBar: ...
    def write_file(self, path: str | Path, data: str | bytes, what: str) -> bool: ...
