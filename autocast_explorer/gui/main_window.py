"""The explorer window: controls on the left, result views in tabs, the verdict in the status bar.

Start-up: the window paints first; torch and core.engine are imported afterwards on a worker
thread ("Loading PyTorch…"), and Run is enabled once they are ready.  Experiments run on the
`runner` (a TaskRunner); the window only draws what core computed.

Contract for testers (README, "Testing with pytest-qt"): the signals below, the objectNames of
the controls and charts, `add_view`, `runner`, `current_config`, `set_config`, `last_result`.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QPaintEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.gui import style
from autocast_explorer.gui.controls import PROGRESS_STEPS, ControlsPanel, error_fields
from autocast_explorer.gui.layer_table import LayerTable
from autocast_explorer.gui.numerics_tabs import install_numerics
from autocast_explorer.gui.overview import OverviewTab
from autocast_explorer.gui.sweeps import install_sweeps
from autocast_explorer.gui.training_tab import install_training
from autocast_explorer.gui.worker import TaskRunner, TaskState

if TYPE_CHECKING:
    import pyqtgraph as pg

    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment

log = logging.getLogger(__name__)

LOADING_TEXT = "Loading PyTorch…"
RUN_TIP = "Measure this config: plain float32 vs autocast, on a worker thread (F5)."


def load_engine_task(state: TaskState) -> Environment:
    """Import torch and the engine off the GUI thread; returns this machine's Environment."""
    state.set_progress(0.05, LOADING_TEXT)
    import torch  # noqa: F401  (the slow part: seconds on a cold disk)

    state.set_progress(0.8, "Loading the engine…")
    from autocast_explorer.core.experiment import summary  # noqa: F401
    from autocast_explorer.core.hardware import cpu as hardware

    return hardware.environment()


def experiment_task(config: ExperimentConfig, state: TaskState) -> ExperimentResult:
    """One experiment on the worker thread; the engine checks `cancel` between timing blocks."""
    from autocast_explorer.core.experiment import engine

    return engine.run_experiment(
        config,
        progress=state.set_progress,
        cancel=state.is_interruption_requested,
        partial=state.set_partial,
    )


class MainWindow(QMainWindow):
    """The Autocast Explorer window. `MainWindow()` builds it without running anything."""

    experimentStarted = Signal()
    #: One training step of the window's own run finished: core's StepProgress (plain data).
    experimentStep = Signal(object)
    experimentFinished = Signal(object)
    experimentFailed = Signal(str)
    experimentCancelled = Signal()
    #: torch and the engine are loaded; Run can be enabled.
    engineReady = Signal()
    #: The window has painted for the first time (start-up measurements use it).
    firstPainted = Signal()
    #: A result is now drawn in every view (after a run, an opened file or a lesson step).
    resultShown = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, autoload: bool = True) -> None:
        """`autoload`: start loading torch right after the first paint (the default)."""
        style.apply_plot_style()
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("Autocast Explorer")
        self.resize(1280, 800)
        self.setMinimumSize(900, 600)

        self.runner = TaskRunner(self, name="experiment")
        self._loader = TaskRunner(self, name="engine-loader")
        self.last_result: ExperimentResult | None = None
        self.environment: Environment | None = None
        self._autoload = autoload
        self._painted = False
        self._engine_ready = False
        self._engine_error = ""
        self._errors: dict[str, str] = {}
        self._guard_blocked: tuple[ExperimentConfig, dict[str, str]] | None = None
        self._run_config: ExperimentConfig | None = None
        self._run_started = 0.0
        self._views: list[QWidget] = []
        self._menus: dict[str, QMenu] = {}
        self._about: QWidget | None = None

        self._build_ui()
        self._create_menus()
        self._connect()
        self._set_loading_state()
        self._validate()
        install_numerics(self)  # issue 6: layer error, agreement, op trace, ops probe
        install_sweeps(self)  # issue 4: Sweeps, Placements and Hardware tabs
        self.trainingTab = install_training(self)

        from autocast_explorer.gui.learn_and_present import install_learn_and_present

        # Last: it audits every menu entry's shortcut and applies the presentation settings.
        install_learn_and_present(self)  # issue 5: lessons, presets, presenting, compare, reports

    # ---- construction ---------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.controls = ControlsPanel()
        scroll = QScrollArea()
        scroll.setObjectName("controlsScroll")
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(330)
        scroll.setMaximumWidth(460)

        self.overview = OverviewTab()
        self.layerTable = LayerTable()
        self.resultTabs = QTabWidget()
        self.resultTabs.setObjectName("resultTabs")
        self.resultTabs.setDocumentMode(True)
        self.resultTabs.addTab(self.overview, "Overview")
        self.resultTabs.addTab(self.layerTable, "Layers")
        self.resultTabs.setTabToolTip(0, "The verdict and the three charts.")
        self.resultTabs.setTabToolTip(1, "Every layer with its measured dtypes.")
        for view in (*self.overview.views(), self.layerTable):
            self._views.append(view)

        self.messageBanner = QLabel("")
        self.messageBanner.setObjectName("messageBanner")
        self.messageBanner.setWordWrap(True)
        self.messageBanner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.messageBanner.setStyleSheet(
            f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 6px;"
            f"border: 1px solid {style.BAD}; border-radius: 4px; font-weight: bold;"
        )
        self.messageBanner.setToolTip("What went wrong in the last run or file operation.")
        self.messageBanner.hide()

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 4, 4, 0)
        right_layout.addWidget(self.messageBanner)
        right_layout.addWidget(self.resultTabs, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("mainSplitter")
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 940])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)

        self.verdictLabel = QLabel("")
        self.verdictLabel.setObjectName("verdictLabel")
        self.verdictLabel.setToolTip("The verdict of the last run (from core.summary.verdict).")
        self.statusBar().addWidget(self.verdictLabel, 1)

        # Convenient handles (the same objects findChild returns by objectName).
        self.widthsEdit = self.controls.widthsEdit
        self.batchSpin = self.controls.batchSpin
        self.runButton = self.controls.runButton
        self.cancelButton = self.controls.cancelButton
        self.progressBar = self.controls.progressBar
        self.latencyPlot = self.overview.latency
        self.dtypePlot = self.overview.dtypes
        self.agreementPlot = self.overview.agreement

    def _create_menus(self) -> None:
        """All menus and actions in one place; others add theirs through `menu(name)`."""
        file_menu = self.menu("&File")
        self.openAction = self._action(
            file_menu, "&Open result JSON…", self._open_result, QKeySequence.StandardKey.Open
        )
        self.openAction.setToolTip("Show a result saved earlier (no new measurement).")
        file_menu.addSeparator()
        self.saveJsonAction = self._action(
            file_menu, "&Save result as JSON…", self._save_json, QKeySequence.StandardKey.Save
        )
        self.saveCsvAction = self._action(
            file_menu, "Save latency &CSV…", self._save_csv, QKeySequence("Ctrl+Shift+S")
        )
        export_menu = file_menu.addMenu("&Export chart as PNG/SVG")
        export_menu.setObjectName("exportMenu")
        self.exportActions: dict[str, QAction] = {}
        for key, title, plot in (
            ("latency", "&Latency chart…", self.latencyPlot),
            ("dtype", "&Dtype per layer chart…", self.dtypePlot),
            ("agreement", "&Agreement chart…", self.agreementPlot),
        ):
            action = self._action(export_menu, title, functools.partial(self._export, plot, key))
            action.setObjectName(f"export_{key}")
            self.exportActions[key] = action
        file_menu.addSeparator()
        self.quitAction = self._action(file_menu, "&Quit", self.close, QKeySequence("Ctrl+Q"))
        self.quitAction.setMenuRole(QAction.MenuRole.QuitRole)

        help_menu = self.menu("&Help")
        self.aboutAction = self._action(help_menu, "&About…", self._show_about, QKeySequence("F1"))
        self.aboutAction.setMenuRole(QAction.MenuRole.AboutRole)
        self._update_file_actions()

    def _action(
        self,
        menu: QMenu,
        text: str,
        handler: Callable[[], Any],
        shortcut: QKeySequence | QKeySequence.StandardKey | None = None,
    ) -> QAction:
        action = QAction(text, self)
        action.setObjectName(text.replace("&", "").rstrip("…").strip().replace(" ", "_"))
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(handler)
        menu.addAction(action)
        return action

    def menu(self, name: str) -> QMenu:
        """The menu titled `name` ('&' ignored), created before Help if it does not exist."""
        key = name.replace("&", "").lower()
        if key in self._menus:
            return self._menus[key]
        menu = QMenu(name, self)
        menu.setObjectName(f"{key}Menu")
        help_menu = self._menus.get("help")
        if help_menu is not None:
            self.menuBar().insertMenu(help_menu.menuAction(), menu)
        else:
            self.menuBar().addMenu(menu)
        self._menus[key] = menu
        return menu

    def _connect(self) -> None:
        self.controls.changed.connect(self._validate)
        self.controls.layersRequested.connect(self._edit_layers)
        self.controls.runButton.clicked.connect(self._on_run_clicked)
        self.controls.cancelButton.clicked.connect(self.cancel_experiment)
        self.runner.started.connect(self._on_runner_started)
        self.runner.progress.connect(self._on_progress)
        self.runner.partial.connect(self._on_partial)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self._on_cancelled)
        self._loader.progress.connect(self._on_loader_progress)
        self._loader.finished.connect(self._on_engine_loaded)
        self._loader.failed.connect(self._on_engine_failed)

    # ---- extension points -----------------------------------------------------------------
    def add_view(self, widget: QWidget, title: str) -> None:
        """Add a tab whose widget gets `show_result(result)` after every finished run."""
        for name in ("show_result", "clear"):
            if not callable(getattr(widget, name, None)):
                raise TypeError(f"a result view needs a {name}() method: {widget!r}")
        self.resultTabs.addTab(widget, title)
        self._views.append(widget)
        if self.last_result is not None:
            self._show_in(widget, self.last_result)

    def views(self) -> list[QWidget]:
        """Every registered result view (built-in ones first)."""
        return list(self._views)

    def current_config(self) -> ExperimentConfig:
        """The config the controls describe; raises ConfigError naming the bad field."""
        return self.controls.config()

    def set_config(self, config: ExperimentConfig) -> None:
        self.controls.set_config(config)

    def show_result(self, result: ExperimentResult) -> None:
        """Draw `result` in every view and the status bar (used for runs and opened files)."""
        from autocast_explorer.core.experiment.summary import verdict

        self.last_result = result
        for view in self._views:
            self._show_in(view, result)
        self.verdictLabel.setText(verdict(result))
        self._update_file_actions()
        self.resultShown.emit(result)

    def clear_results(self) -> None:
        self.last_result = None
        for view in self._views:
            view.clear()
        self.verdictLabel.setText("")
        self._update_file_actions()

    def _show_in(self, view: QWidget, result: ExperimentResult) -> None:
        try:
            view.show_result(result)
        except Exception as exc:  # one broken view must not take the window down
            log.exception("result view %r failed", view)
            self.show_banner(f"The view {view.objectName() or type(view).__name__} failed: {exc}")

    # ---- engine loading -------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.firstPainted.emit()
            if self._autoload:
                # After this paint pass has reached the screen, not inside it.
                QTimer.singleShot(0, self.load_engine)

    @Slot()
    def load_engine(self) -> None:
        """Start importing torch + core.engine on a worker thread (idempotent)."""
        if self._engine_ready or self._loader.is_running() or self._engine_error:
            return
        self._loader.start(load_engine_task)

    def engine_ready(self) -> bool:
        return self._engine_ready

    def _set_loading_state(self) -> None:
        self.controls.progressBar.setRange(0, 0)  # busy indicator
        self.controls.progressLabel.setText(LOADING_TEXT)
        self.verdictLabel.setText(LOADING_TEXT)
        self.overview.header.set_headline(LOADING_TEXT)

    @Slot(float, str)
    def _on_loader_progress(self, _fraction: float, message: str) -> None:
        self.controls.progressLabel.setText(message)

    @Slot(object)
    def _on_engine_loaded(self, env: Environment) -> None:
        self._engine_ready = True
        self.environment = env
        self.controls.progressBar.setRange(0, PROGRESS_STEPS)
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText(
            f"PyTorch {env.torch_version} ready · {env.cpu_model} · {env.threads} threads"
        )
        if self.last_result is None:
            self.overview.header.clear()
            self.verdictLabel.setText("Ready: press Run (F5).")
        self._validate()
        self.engineReady.emit()

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self._engine_error = message
        self.controls.progressBar.setRange(0, PROGRESS_STEPS)
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("PyTorch could not be loaded.")
        self.verdictLabel.setText("PyTorch could not be loaded.")
        self.show_banner(f"PyTorch could not be loaded, so nothing can be measured: {message}")
        self._update_actions()

    # ---- validation -----------------------------------------------------------------------
    @Slot()
    def _validate(self) -> None:
        """Check the controls with core's rules; show messages inline; enable Run or not."""
        errors: dict[str, str] = {}
        try:
            config = self.current_config()
        except ConfigError as exc:
            errors = error_fields(exc)
        else:
            if self._engine_ready:
                from autocast_explorer.core.experiment import guards

                try:
                    guards.check_memory(config)  # cheap: arithmetic and /proc/meminfo
                except ConfigError as exc:
                    errors = error_fields(exc)
            if not errors and self._guard_blocked and self._guard_blocked[0] == config:
                errors = dict(self._guard_blocked[1])
        self._errors = errors
        self.controls.show_errors(errors)
        self._update_actions()

    def input_errors(self) -> dict[str, str]:
        """Inline messages now shown, by field ('guard' for memory/time)."""
        return self.controls.errors()

    def _update_actions(self) -> None:
        running = self.runner.is_running()
        can_run = self._engine_ready and not running and not self._errors
        self.controls.runButton.setEnabled(can_run)
        self.controls.cancelButton.setEnabled(running)
        if self._engine_error:
            reason = "PyTorch could not be loaded (see the message above the charts)."
        elif not self._engine_ready:
            reason = "Waiting for PyTorch to load…"
        elif running:
            reason = "A run is in progress: Cancel (Esc) first."
        elif self._errors:
            reason = "Fix the highlighted input first."
        else:
            reason = RUN_TIP
        self.controls.runButton.setToolTip(reason)
        self._update_file_actions()

    def _update_file_actions(self) -> None:
        has_result = self.last_result is not None
        for action in (self.saveJsonAction, self.saveCsvAction, *self.exportActions.values()):
            action.setEnabled(has_result)
        self.openAction.setEnabled(self._engine_ready)

    # ---- running --------------------------------------------------------------------------
    @Slot()
    def _on_run_clicked(self) -> None:
        self.start_experiment()

    def start_experiment(self) -> bool:
        """Start a run with the current config; False (and nothing started) if it cannot."""
        if not self._engine_ready or self.runner.is_running():
            return False
        self._validate()
        if self._errors:
            return False
        config = self.current_config()
        self._run_config = config
        if not self.runner.start(functools.partial(experiment_task, config)):
            self._run_config = None
            return False
        self.messageBanner.hide()
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("Starting…")
        self.verdictLabel.setText("Measuring…")
        self._update_actions()
        self.experimentStarted.emit()
        return True

    @Slot()
    def cancel_experiment(self) -> None:
        if self.runner.is_running():
            training = self._run_config is not None and self._run_config.mode == "train"
            where = "training step" if training else "timing block"
            self.controls.progressLabel.setText(f"Cancelling after the current {where}…")
            self.runner.cancel()

    # The runner is shared: other panels (sweeps …) may run their own tasks on it. Progress
    # and Cancel serve any task; the experiment signals and views only this window's runs,
    # which are the ones started while `_run_config` was set.

    @Slot()
    def _on_runner_started(self) -> None:
        self._run_started = time.monotonic()
        self._update_actions()

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        self.controls.progressBar.setValue(round(fraction * PROGRESS_STEPS))
        self.controls.progressLabel.setText(message)

    @Slot(object)
    def _on_partial(self, obj: object) -> None:
        if self._run_config is not None:  # this window's run, not another panel's task
            self.experimentStep.emit(obj)

    def running_config(self) -> ExperimentConfig | None:
        """The config of the window's run in progress (None when none runs)."""
        return self._run_config

    def _take_own_run(self) -> ExperimentConfig | None:
        """The config of this window's run that just ended (None: another panel's task)."""
        config, self._run_config = self._run_config, None
        return config

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        own = self._take_own_run()
        elapsed = time.monotonic() - self._run_started
        self.controls.progressBar.setValue(PROGRESS_STEPS)
        self.controls.progressLabel.setText(f"Done in {elapsed:.1f} s.")
        if own is not None:
            self.show_result(result)
        self._update_actions()
        if own is not None:
            self.experimentFinished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        own = self._take_own_run()
        error = self.runner.last_error
        if own is not None and isinstance(error, ConfigError):
            # A guard refused this config (too big or too slow): keep Run off until it changes.
            self._guard_blocked = (own, error_fields(error))
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("Failed.")
        self.verdictLabel.setText(f"Run failed: {message}")
        self.show_banner(f"Run failed: {message}")
        self._validate()
        if own is not None:
            self.experimentFailed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        own = self._take_own_run()
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("Cancelled.")
        if own is not None:
            self.verdictLabel.setText("Run cancelled.")
        self._update_actions()
        if own is not None:
            self.experimentCancelled.emit()

    def show_banner(self, text: str) -> None:
        self.messageBanner.setText(text)
        self.messageBanner.show()

    # ---- layer editor ---------------------------------------------------------------------
    @Slot()
    def _edit_layers(self) -> None:
        from autocast_explorer.core.experiment.config import parse_widths
        from autocast_explorer.gui.layer_editor import LayerEditorDialog

        try:
            widths = parse_widths(self.controls.widthsEdit.text())
        except ConfigError:
            widths = ExperimentConfig().widths
        dialog = LayerEditorDialog(widths, self)
        if dialog.exec():
            self.controls.widthsEdit.setText(",".join(map(str, dialog.widths())))

    # ---- files ----------------------------------------------------------------------------
    def _ask_save_path(self, title: str, name: str, filters: str) -> tuple[str, str]:
        return QFileDialog.getSaveFileName(self, title, str(Path.cwd() / name), filters)

    def write_file(self, path: str | Path, data: str | bytes, what: str) -> bool:
        """Write atomically; the status bar says so, or the banner says why not (False)."""
        from autocast_explorer.core.documents.files import write_atomic

        try:
            write_atomic(path, data)
        except OSError as exc:
            self.show_banner(f"Could not save {what} to {path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Saved {what} to {path}", 5000)
        return True

    @Slot()
    def _save_json(self) -> None:
        if self.last_result is None:
            return
        path, _ = self._ask_save_path(
            "Save result as JSON", "autocast-result.json", "JSON (*.json)"
        )
        if path:
            self.write_file(path, self.last_result.to_json(), "the result")

    @Slot()
    def _save_csv(self) -> None:
        if self.last_result is None:
            return
        path, _ = self._ask_save_path("Save latency CSV", "autocast-latency.csv", "CSV (*.csv)")
        if path:
            self.write_file(path, self.last_result.to_csv(), "the latency CSV")

    def _export(self, plot: pg.PlotWidget, key: str, *_checked: object) -> None:
        from autocast_explorer.gui.export import FORMATS, chart_bytes

        path, chosen = self._ask_save_path(
            "Export chart", f"autocast-{key}.png", ";;".join(FORMATS.values())
        )
        if not path:
            return
        suffix = Path(path).suffix.lower()
        if suffix not in FORMATS:
            suffix = ".svg" if "svg" in chosen.lower() else ".png"
            path += suffix
        try:
            data = chart_bytes(plot, suffix)
        except (OSError, ValueError) as exc:
            self.show_banner(f"Could not export the chart: {exc}")
            return
        self.write_file(path, data, "the chart")

    @Slot()
    def _open_result(self) -> None:
        # Size-limited, strict JSON: ResultFileError names the file and the problem.
        from autocast_explorer.core.learning.compare import ResultFileError, load_result_file

        path, _ = QFileDialog.getOpenFileName(self, "Open result", str(Path.cwd()), "JSON (*.json)")
        if not path:
            return
        try:
            result = load_result_file(path)
        except ResultFileError as exc:
            self.show_banner(f"Could not open {exc}")
            return
        self.messageBanner.hide()
        self.show_result(result)
        self.statusBar().showMessage(f"Showing {path}", 5000)

    # ---- help -----------------------------------------------------------------------------
    @Slot()
    def _show_about(self) -> None:
        from autocast_explorer.gui.about import AboutDialog

        if self._about is not None:
            self._about.close()
            self._about.deleteLater()
        self._about = AboutDialog(self.environment, self)
        self._about.show()

    # ---- closing --------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel any run and wait for every worker thread (safe to call twice)."""
        self.runner.shutdown()
        self._loader.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.runner.is_running():
            self.controls.progressLabel.setText("Cancelling before closing…")
        self.shutdown()
        if self._about is not None:
            self._about.close()
        super().closeEvent(event)
