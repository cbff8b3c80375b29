"""The explorer window: controls on the left, result views in tabs, the verdict in the status bar.

The window assembles; it does not broker. It builds the controls, the tabs and the status bar,
then hands each concern to the module that owns it: `experiment_run` (loading the engine,
validation, Run and Cancel), `result_router` (the result shown in every view, the verdict,
the stale mark), `files` (open, save, CSV, chart exports) and `menus` (the menu bar and the
window's own entries). Everything else comes from `FIRST_PAINT_FEATURES` and
`later_features()`, each a function `install(ctx)` that gets the narrow AppContext (never the
window) and publishes its handles under typed keys (shell/handles.py); the window sets each as
an attribute of the key's name for testers, and its own calls (feature_handles.py) ask the
context by key. The app's window is progressive: it paints with the first group, starts
loading torch, and builds the second once the engine has loaded (`featuresInstalled`; why in
engine_loading.py); `MainWindow()` builds both at once.

Contract for testers (docs/testing.md, guarded by tests/contract/snapshot.json): the signals
below, every objectName, the public methods and attributes, and what they return.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QPaintEvent
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.gui.features.experiment.controls import ControlsPanel
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.actions import ActionRegistry, audit_shortcuts
from autocast_explorer.gui.shell.context import AppContext, Feature
from autocast_explorer.gui.shell.experiment_state import ExperimentState
from autocast_explorer.gui.window import layout, menus
from autocast_explorer.gui.window.about import show_about
from autocast_explorer.gui.window.experiment_run import (
    ExperimentRun,
    ask_model_file,
    edit_layers,
)
from autocast_explorer.gui.window.feature_handles import FeatureHandles
from autocast_explorer.gui.window.feature_order import FIRST_PAINT_FEATURES, later_features
from autocast_explorer.gui.window.files import WindowFiles
from autocast_explorer.gui.window.help_window import HelpWindow, show_help
from autocast_explorer.gui.window.result_room import ResultRoom
from autocast_explorer.gui.window.result_router import ResultRouter, stale_label
from autocast_explorer.gui.window.settings import SettingsKeeper, install_settings, recent_specs

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.core.sweeps.spec import SweepSpec


class MainWindow(FeatureHandles, QMainWindow):
    """The Autocast Explorer window. `MainWindow()` builds it without running anything."""

    experimentStarted = Signal()
    #: One training step of the window's own run finished: core's StepProgress (plain data).
    experimentStep = Signal(object)
    experimentFinished = Signal(object)
    experimentFailed = Signal(str)
    experimentCancelled = Signal()
    #: The run just started is forecast to take long (core's Forecast): it waits for Run
    #: anyway (`run_anyway()`) or Cancel, shown in the `forecastBar` under Run.
    experimentForecast = Signal(object)
    #: torch is imported: Run is enabled from now (when the controls hold a valid config); a
    #: run pressed before `engineReady` waits for the engine's imports on its worker.
    torchLoaded = Signal()
    #: torch and the engine are loaded and `environment` is set.
    engineReady = Signal()
    #: The window has painted for the first time (start-up measurements use it).
    firstPainted = Signal()
    #: A result is now drawn in every view (after a run, an opened file or a lesson step).
    resultShown = Signal(object)
    #: Every feature's tabs and entries exist (in the constructor unless `progressive`).
    featuresInstalled = Signal()

    settingsKeeper: SettingsKeeper
    # The window's own menu entries (menus.py makes them).
    openAction: QAction
    saveJsonAction: QAction
    saveAsAction: QAction
    saveCsvAction: QAction
    quitAction: QAction
    runAction: QAction
    cancelAction: QAction
    helpAction: QAction
    aboutQtAction: QAction
    aboutAction: QAction

    def __init__(
        self, parent: QWidget | None = None, *, autoload: bool = True, progressive: bool = False
    ) -> None:
        """`autoload`: start loading torch right after the first paint (the default).
        `progressive`: paint first, then import and build the tabs the first picture does not
        show, after the engine has loaded when it is loading (`featuresInstalled` says when);
        the app's window is progressive, so it appears and Run is ready sooner. By default
        everything is built before this returns."""
        style.apply_plot_style()
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("Autocast Explorer")
        self.resize(1280, 800)
        self.setMinimumSize(900, 600)
        self.last_result: ExperimentResult | None = None
        self.environment: Environment | None = None
        #: The file the result shown now was opened from or saved to (what Save writes).
        self.result_path: Path | None = None
        #: Asks whether to import a model file not run before (tests replace it).
        self.confirm_model_file: Callable[[str], bool] = functools.partial(ask_model_file, self)
        #: What each feature published (by its handle's name), e.g. "sweeps", "lessonsPanel".
        self.handles: dict[str, Any] = {}
        #: Work features asked to run after the first paint (None once it ran, or at once).
        self._after_first_paint: list[Callable[[], object]] | None = [] if progressive else None
        #: Every feature is installed (at once, or after the first paint when progressive).
        self.features_installed = False
        self._autoload = autoload
        self._painted = False
        self._about: QWidget | None = None
        self._help: HelpWindow | None = None

        #: The config a Run measures: the controls edit it, features set it through the context.
        self.experiment_state = ExperimentState(parent=self)
        self._build_ui()
        self._run = ExperimentRun(
            self,
            self,
            self.controls,
            self.verdictLabel,
            lambda path: self.confirm_model_file(path),
            self._router.run_asked,
        )
        self.runner = self._run.runner
        self.task_router = self._run.router
        self._menus = menus.MenuBar(self)
        self.actions_registry = ActionRegistry(self, self.menu)
        self._files = WindowFiles(self, self, self.actions_registry, self._chart)
        self.exportActions = self._files.export_actions
        self.context = AppContext(self)
        self._add_menu_entries()
        self._connect()
        self._run.validate()
        for install in FIRST_PAINT_FEATURES:
            self._install(install)
        # The saved config, layout, text scale and theme, before anything is shown.
        install_settings(self)
        self.controls.family.userPage.set_recent(recent_specs())
        if not progressive:
            self._install_later_features()

    def after_first_paint(self, job: Callable[[], object]) -> None:
        """Run `job` once the window has painted (a progressive window), else now."""
        if self._after_first_paint is None:
            job()
        else:
            self._after_first_paint.append(job)

    def _run_deferred_jobs(self) -> None:
        """The work features asked to run after the first paint (the preset list); from now
        on `after_first_paint` runs a job at once."""
        jobs, self._after_first_paint = self._after_first_paint or [], None
        for job in jobs:
            job()

    @Slot()
    def _install_later_features(self) -> None:
        """The tabs and entries the first picture does not need."""
        if self.features_installed:
            return
        for install in later_features():
            self._install(install)
        self.actions_registry.refresh()
        audit_shortcuts(self)  # last: every menu entry's tooltip names its key
        self.features_installed = True
        self.context.featuresInstalled.emit()
        self.featuresInstalled.emit()

    def _install(self, install: Feature) -> None:
        """Install a feature, then set what it published as attributes for testers
        (`window.<name>`, and `handles`); the window's own code asks the context by key."""
        install(self.context)
        for name, handle in self.context.published().items():
            if name in self.handles:
                continue
            if hasattr(type(self), name):
                raise ValueError(f"a feature publishes {name!r}, a name of the window's own")
            self.handles[name] = handle
            setattr(self, name, handle)

    # ---- construction ---------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.controls = ControlsPanel(state=self.experiment_state)
        self.controlsScroll = layout.controls_scroll(self.controls)
        self.controlsColumn = layout.controls_column(self.controlsScroll, self.controls.runFooter)
        self.resultTabs = layout.result_tabs()
        self.messageBanner = layout.message_banner()
        self.staleLabel = stale_label()
        right = layout.results_column(self.messageBanner, self.staleLabel, self.resultTabs)
        self.mainSplitter = layout.main_splitter(self.controlsColumn, right)
        self.setCentralWidget(self.mainSplitter)
        # Resized (window, docks, text scale): the column and docks give the results room.
        self.resultRoom = ResultRoom(self, self.mainSplitter, self.controlsColumn, self.resultTabs)
        self.verdictLabel, self.statusMessageLabel = layout.status_labels(self.statusBar())
        self._router = ResultRouter(self, self.resultTabs, self.verdictLabel, self.staleLabel)
        # Convenient handles (the same objects findChild returns by objectName).
        self.widthsEdit = self.controls.widthsEdit
        self.batchSpin = self.controls.inputs["batch"]
        self.runButton = self.controls.runButton
        self.cancelButton = self.controls.cancelButton
        self.progressBar = self.controls.progressBar

    def _add_menu_entries(self) -> None:
        """The window's own entries; features add theirs through the context."""
        registry = self.actions_registry
        has_result = lambda: self.last_result is not None  # noqa: E731
        menus.add_file_entries(self, registry, self._files, has_result)
        run, cancel = self.runButton, self.cancelButton
        menus.add_run_entries(self, registry, run.isEnabled, cancel.isEnabled)
        menus.add_help_entries(self, registry, self.show_help, self._show_about)

    def _connect(self) -> None:
        changed = self.controls.changed
        changed.connect(self._run.validate)
        changed.connect(self._router.mark_stale)
        changed.connect(self.context.configChanged)
        self.controls.layersRequested.connect(lambda: edit_layers(self, self.controls))
        self.controls.runButton.clicked.connect(self.start_experiment)
        self.controls.cancelButton.clicked.connect(self.cancel_experiment)
        run, ctx = self._run, self.context
        run.started.connect(lambda _config: self.experimentStarted.emit())
        for ours, theirs in (
            (run.started, ctx.experimentStarted),
            (run.step, self.experimentStep),
            (run.step, ctx.experimentStep),
            (run.finished, self.experimentFinished),
            (run.finished, ctx.experimentFinished),
            (run.failed, self.experimentFailed),
            (run.failed, ctx.experimentFailed),
            (run.cancelled, self.experimentCancelled),
            (run.forecastShown, self.experimentForecast),
            (run.cancelled, ctx.experimentCancelled),
            (self._router.shown, self.resultShown),
            (self._router.shown, ctx.resultShown),
            (run.torchLoaded, self.torchLoaded),
            (run.torchLoaded, ctx.torchLoaded),
            (run.engineLoaded, ctx.engineReady),
            (run.engineLoaded, self.engineReady),
        ):
            ours.connect(theirs)
        run.stateChanged.connect(self._state_changed)
        self._router.changed.connect(self._state_changed)

    def _chart(self, key: str) -> Any:
        return self.context.chart(key)

    def _state_changed(self) -> None:
        self.actions_registry.refresh()
        self.context.stateChanged.emit()

    # ---- what the context and testers call --------------------------------------------------
    def menu(self, name: str) -> QMenu:
        """The menu titled `name` ('&' ignored), created before Help if it does not exist."""
        return self._menus.menu(name)

    def add_view(self, widget: QWidget, title: str) -> None:
        """Add a tab whose widget gets `show_result(result)` after every finished run."""
        self._router.add_view(widget, title)

    def views(self) -> list[QWidget]:
        """Every registered result view (built-in ones first)."""
        return self._router.views()

    def layout_state(self) -> QByteArray:
        """The docks' and toolbars' layout to save: saveState(), with a dock that a narrow
        window moved below the results back at the side the user left it on."""
        return self.resultRoom.saved_state()

    def restore_layout(self, state: QByteArray) -> bool:
        """restoreState() for a layout saved by layout_state(): the docks go where it says, and
        the result room starts over from there (nothing below, nothing placed by the user)."""
        return self.resultRoom.restore_state(state)

    def current_config(self) -> ExperimentConfig:
        """The experiment state's config; ConfigError naming the bad field while the controls
        hold an edit core refuses."""
        return self.controls.config()

    def set_config(self, config: ExperimentConfig) -> None:
        """Set the experiment state to `config`, every field of it; the controls follow."""
        self.controls.set_config(config)

    def input_errors(self) -> dict[str, str]:
        """Inline messages now shown, by field ('guard' for memory/time)."""
        return self.controls.errors()

    def show_result(self, result: ExperimentResult) -> None:
        """Draw `result` in every view and the status bar (used for runs and opened files)."""
        self._router.show(result)

    def clear_results(self) -> None:
        self._router.clear()

    def show_banner(self, text: str) -> None:
        self.messageBanner.setText(text)
        self.messageBanner.show()

    @property
    def pending_sweep(self) -> SweepSpec | None:
        """The sweep of the preset chosen last (None: that preset has no sweep)."""
        return self.context.requested_sweep

    # ---- the engine and runs (experiment_run.py) -------------------------------------------
    @Slot()
    def load_engine(self) -> None:
        """Start importing torch + core.engine on a worker thread (idempotent); the work
        features asked to run after the first paint runs once torch is in, before the engine's
        imports (engine_loading.py)."""
        self._run.load_engine(before_engine=self._run_deferred_jobs)

    def engine_ready(self) -> bool:
        return self._run.engine_ready()

    def start_experiment(self) -> bool:
        """Start a run with the current config; False (and nothing started) if it cannot."""
        return self._run.start()

    @Slot()
    def run_anyway(self) -> None:
        """Answer a long run's forecast with Run anyway (as its button does)."""
        self.controls.forecastBar.runAnywayButton.click()

    @Slot()
    def cancel_experiment(self) -> None:
        """Cancel whatever task runs on the shared runner (Esc serves every tab)."""
        self._run.cancel()

    # ---- files (files.py; the features' own files: feature_handles.py) ---------------------
    def write_file(self, path: str | Path, data: str | bytes, what: str) -> bool:
        """Write atomically; the status bar says so, or the banner says why not (False). A FIFO
        or device is written non-blocking and given up after a second without progress."""
        return self._files.write(path, data, what)

    def save_result(self, path: str | Path) -> bool:
        """The result shown now as JSON (.json) or its latency CSV (.csv); False if none."""
        return self._files.save_result(path)

    def open_result(self, path: str | Path) -> bool:
        """Show a saved result in every view; the banner names the problem (False)."""
        return self._files.open_result(path)

    def add_chart_export(
        self,
        key: str,
        title: str,
        enabled_when: Callable[[], bool] | None = None,
        *,
        new_section: bool = False,
    ) -> QAction:
        """An entry in File › Export chart (objectName `export_<key>`); `new_section`: after a
        separator."""
        return self._files.add_chart_export(key, title, enabled_when, new_section=new_section)

    def export_chart(self, key: str, path: str | Path) -> bool:
        """Write chart `key` as PNG or SVG (by suffix); the banner says why not (False)."""
        return self._files.export_chart(key, path)

    # ---- first paint, help, closing ---------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.firstPainted.emit()
            # After this paint pass has reached the screen, not inside it.
            QTimer.singleShot(0, self._after_first_paint_pass)

    @Slot()
    def _after_first_paint_pass(self) -> None:
        """Torch on the loader at once, the preset list once it is in, the other tabs once the
        loader has ended: under one interpreter lock, whatever runs beside torch's import only
        delays Run by as long as it takes (engine_loading.py)."""
        if self._autoload:
            self.load_engine()
        if not self._run.engine_loading():
            self._run_deferred_jobs()
        if self.features_installed:
            return
        if self._run.engine_loading():
            self._run.engineSettled.connect(
                self._install_later_features, Qt.ConnectionType.QueuedConnection
            )
        else:
            self._install_later_features()

    @Slot()
    def show_help(self) -> HelpWindow:
        """Help › Autocast Explorer Help (F1): shortcuts and the manual at 'The window'."""
        self._help = show_help(self, self.menuBar(), self._help)
        return self._help

    @Slot()
    def _show_about(self) -> None:
        self._about = show_about(self.environment, self, self._about)

    def shutdown(self, timeout_s: float | None = None) -> list[str]:
        """Cancel any run and wait (bounded) for every worker thread; safe to call twice.

        Returns the threads still running when the time was up (logged as well).
        """
        from autocast_explorer.gui.tasks.runner import SHUTDOWN_TIMEOUT_S

        return self._run.shutdown(SHUTDOWN_TIMEOUT_S if timeout_s is None else timeout_s)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.runner.is_running():
            self.controls.progressLabel.setText("Cancelling before closing…")
        self.shutdown()
        if self._about is not None:
            self._about.close()
        super().closeEvent(event)
