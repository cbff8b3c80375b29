"""The explorer window: controls on the left, result views in tabs, the verdict in the status bar.

Start-up: the window paints first; torch and core.engine are imported afterwards on a worker
thread ("Loading PyTorch…"), and Run is enabled once they are ready.  Experiments run on the
`runner` (a TaskRunner); the window only draws what core computed.

The window is a shell: it owns the controls, the run of one experiment, the menus and the
banner, and builds everything else from `FIRST_PAINT_FEATURES` and `later_features()`, each a
function `install(ctx)` that gets the narrow AppContext (never the window) and returns the
handles testers may use. The app's window is progressive: it paints with the first group and
builds the second right after (`featuresInstalled`); `MainWindow()` builds both at once.

Contract for testers (docs/testing.md, guarded by tests/contract/snapshot.json): the signals
below, every objectName, the public methods and attributes, and what they return.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QPaintEvent
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.config_words import config_line
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.spec import model_file
from autocast_explorer.gui.features import experiment, lessons, presentation, presets
from autocast_explorer.gui.features.experiment.controls import PROGRESS_STEPS, ControlsPanel
from autocast_explorer.gui.features.experiment.field_errors import error_fields
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.actions import ActionRegistry, audit_shortcuts
from autocast_explorer.gui.shell.banner import BannerLabel
from autocast_explorer.gui.shell.context import AppContext, Feature
from autocast_explorer.gui.shell.elided import ElidedLabel
from autocast_explorer.gui.shell.experiment_state import ExperimentState
from autocast_explorer.gui.shell.keys import StandardKey
from autocast_explorer.gui.shell.reflow import ScrollingTabs
from autocast_explorer.gui.tasks.client import TaskRouter
from autocast_explorer.gui.tasks.runner import TaskRunner, TaskState
from autocast_explorer.gui.window.help_window import HelpWindow, show_help
from autocast_explorer.gui.window.result_room import ResultRoom
from autocast_explorer.gui.window.settings import install_settings

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.core.learning.compare import ResultFileError
    from autocast_explorer.core.sweeps.spec import SweepSpec
    from autocast_explorer.gui.features.compare.window import CompareWindow

log = logging.getLogger(__name__)

LOADING_TEXT = "Loading PyTorch…"
RUN_TIP = "Measure this config: plain float32 vs autocast, on a worker thread (F5)."
EXPERIMENT_OWNER = "experiment"

#: What the first picture shows, built before the first paint: the controls with the preset
#: box above them, the Overview and Layers tabs, the text scale and theme, the lessons dock.
FIRST_PAINT_FEATURES: tuple[Feature, ...] = (
    experiment.install,  # Overview and Layers, the three result charts
    presentation.install,  # text scale, projector theme, full screen, hidden controls
    presets.install,  # the preset picker above the controls (filled after the first paint)
    lessons.install,  # the guided lessons dock
)


def later_features() -> tuple[Feature, ...]:
    """The other features, in tab order after Overview and Layers. Imported here, not at the
    top: a progressive window (the app's) paints before it imports and builds them."""
    from autocast_explorer.gui.features import (
        accuracy,
        compare,
        hardware,
        numerics,
        ops,
        placements,
        report,
        routes,
        sweeps,
        training,
    )

    return (
        numerics.install,  # Layer error, Agreement, Op trace
        ops.install,  # the live op-policy probe
        sweeps.install,  # Sweeps tab, sweep files
        placements.install,  # per-call vs hoisted vs pre-cast
        training.install,  # Training tab: loss curves, memory saved for backward, gradients
        accuracy.install,  # Accuracy tab: held-out answers on real data, the flipped rows
        routes.install,  # Routes tab: eager, torch.compile and implicit bf16 side by side
        hardware.install,  # CPU facts, oneDNN kernel, roofline
        compare.install,  # Compare runs window
        report.install,  # File › Export report
    )


def load_engine_task(state: TaskState) -> Environment:
    """Import torch and the engine off the GUI thread; returns this machine's Environment."""
    state.set_progress(0.05, LOADING_TEXT)
    import torch  # noqa: F401  (the slow part: seconds on a cold disk)

    state.set_progress(0.8, "Loading the engine…")
    from autocast_explorer.core.experiment import summary  # noqa: F401
    from autocast_explorer.core.hardware import cpu as hardware_facts

    return hardware_facts.environment()


def experiment_task(config: ExperimentConfig, state: TaskState) -> ExperimentResult:
    """One experiment on the worker thread; the engine checks `cancel` between timing blocks."""
    from autocast_explorer.core.experiment import engine

    return engine.run_experiment(
        config,
        progress=state.set_progress,
        cancel=state.is_interruption_requested,
        partial=state.set_partial,
    )


#: A FIFO that takes nothing for this long is given up (a save runs on the GUI thread).
GUI_STREAM_STALL_SECONDS = 1.0


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
    #: Every feature's tabs and entries exist (in the constructor unless `progressive`).
    featuresInstalled = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, autoload: bool = True, progressive: bool = False
    ) -> None:
        """`autoload`: start loading torch right after the first paint (the default).
        `progressive`: paint first, then import and build the tabs the first picture does not
        show (`featuresInstalled` says when); the app's window is progressive, so it appears
        sooner. By default everything is built before this returns."""
        style.apply_plot_style()
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("Autocast Explorer")
        self.resize(1280, 800)
        self.setMinimumSize(900, 600)

        self.runner = TaskRunner(self, name="experiment")
        self._loader = TaskRunner(self, name="engine-loader")
        # Progress and Cancel serve any task: connected before the router hands outcomes out.
        self.runner.started.connect(self._on_runner_started)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_task_ended)
        self.runner.failed.connect(self._on_task_failed)
        self.runner.cancelled.connect(self._on_task_cancelled)
        self.task_router = TaskRouter(self.runner, self)
        self._experiment = self.task_router.client(EXPERIMENT_OWNER)
        self.last_result: ExperimentResult | None = None
        self.environment: Environment | None = None
        self._autoload = autoload
        self._painted = False
        self._engine_ready = False
        self._engine_error = ""
        self._errors: dict[str, str] = {}
        self._user_error: tuple[ExperimentConfig, dict[str, str]] | None = None
        #: Asks whether to import a model file not run before (tests replace it).
        self.confirm_model_file: Callable[[str], bool] = self._ask_model_file
        self._guard_blocked: tuple[ExperimentConfig, dict[str, str]] | None = None
        self._run_config: ExperimentConfig | None = None
        #: The config the controls asked for when the run now shown started, and the one the
        #: stale mark compares the controls with (a run's, else the shown result's own).
        self._asked_config: ExperimentConfig | None = None
        self._shown_config: ExperimentConfig | None = None
        self._run_started = 0.0
        self._views: list[QWidget] = []
        self._menus: dict[str, QMenu] = {}
        self._about: QWidget | None = None
        self._help: HelpWindow | None = None
        #: The file the result shown now was opened from or saved to (what Save writes).
        self.result_path: Path | None = None
        self.exportActions: dict[str, QAction] = {}
        #: What each feature handed back (by attribute name), e.g. "sweeps", "lessonsPanel".
        self.handles: dict[str, Any] = {}

        #: Work features asked to run after the first paint (None once it ran, or at once).
        self._after_first_paint: list[Callable[[], None]] | None = [] if progressive else None
        #: Every feature is installed (at once, or after the first paint when progressive).
        self.features_installed = False

        #: The config a Run measures: the controls edit it, features set it through the context.
        self.experiment_state = ExperimentState(parent=self)
        self._build_ui()
        self.actions_registry = ActionRegistry(self, self.menu)
        self.context = AppContext(self)
        self._create_menus()
        self._connect()
        self._validate()
        for install in FIRST_PAINT_FEATURES:
            self._install(install)
        # The saved config, layout, text scale and theme, before anything is shown.
        install_settings(self)
        from autocast_explorer.gui.window.settings import recent_specs

        self.controls.family.userPage.set_recent(recent_specs())
        if not progressive:
            self._install_later_features()

    def after_first_paint(self, job: Callable[[], None]) -> None:
        """Run `job` once the window has painted (a progressive window), else now."""
        if self._after_first_paint is None:
            job()
        else:
            self._after_first_paint.append(job)

    @Slot()
    def _install_later_features(self) -> None:
        """The tabs and entries the first picture does not need, then the deferred jobs."""
        if self.features_installed:
            return
        for install in later_features():
            self._install(install)
        jobs, self._after_first_paint = self._after_first_paint or [], None
        for job in jobs:
            job()
        self.actions_registry.refresh()
        # Last: every menu entry's tooltip names its key.
        audit_shortcuts(self)
        self.features_installed = True
        self.context.featuresInstalled.emit()
        self.featuresInstalled.emit()

    def _install(self, install: Feature) -> None:
        handles = install(self.context) or {}
        for name, handle in handles.items():
            if name in self.handles or hasattr(type(self), name):
                raise ValueError(f"two features publish {name!r}")
            self.handles[name] = handle
            setattr(self, name, handle)

    # ---- construction ---------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.controls = ControlsPanel(state=self.experiment_state)
        scroll = QScrollArea()
        scroll.setObjectName("controlsScroll")
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.controlsScroll = scroll

        self.resultTabs = ScrollingTabs()
        self.resultTabs.setObjectName("resultTabs")
        self.resultTabs.setDocumentMode(True)

        self.messageBanner = BannerLabel("")
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
        self.staleLabel = QLabel("")
        self.staleLabel.setObjectName("staleLabel")
        self.staleLabel.setWordWrap(True)
        self.staleLabel.setStyleSheet(
            f"color: {style.WARN}; border: 1px solid {style.WARN}; border-radius: 4px; "
            "padding: 4px;"
        )
        self.staleLabel.setToolTip(
            "The controls no longer describe the result shown: its numbers are for the config "
            "named here. Run (F5) measures the controls' config; setting them back clears this."
        )
        self.staleLabel.hide()
        right_layout.addWidget(self.staleLabel)
        right_layout.addWidget(self.resultTabs, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("mainSplitter")
        left = QWidget()
        left.setObjectName("controlsColumn")
        left.setMinimumWidth(330)
        left.setMaximumWidth(460)
        self.controlsColumn = left
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addWidget(scroll, 1)
        left_layout.addWidget(self.controls.runFooter)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 940])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)
        self.mainSplitter = splitter
        # Resized (window, docks, text scale): the column and docks give the results room.
        self.resultRoom = ResultRoom(self, splitter, left, self.resultTabs)

        self._build_status_bar()

        # Convenient handles (the same objects findChild returns by objectName).
        self.widthsEdit = self.controls.widthsEdit
        self.batchSpin = self.controls.batchSpin
        self.runButton = self.controls.runButton
        self.cancelButton = self.controls.cancelButton
        self.progressBar = self.controls.progressBar

    def _build_status_bar(self) -> None:
        # Both permanent: QStatusBar.showMessage hides (and paints over) normal widgets, so the
        # verdict would vanish under "Text at 150%". Transient messages show in their own label
        # to the right of the verdict (fed by messageChanged), and vanish when they expire.
        self.verdictLabel = ElidedLabel(
            "", "The verdict of the last run (from core.summary.verdict)."
        )
        self.verdictLabel.setObjectName("verdictLabel")
        self.statusBar().addPermanentWidget(self.verdictLabel, 1)
        self.statusMessageLabel = QLabel("")
        self.statusMessageLabel.setObjectName("statusMessageLabel")
        self.statusMessageLabel.setToolTip("A passing message (a saved file, the text scale).")
        self.statusMessageLabel.setStyleSheet(f"color: {style.MUTED};")
        self.statusMessageLabel.hide()
        self.statusBar().addPermanentWidget(self.statusMessageLabel)
        self.statusBar().messageChanged.connect(self._show_status_message)

    @Slot(str)
    def _show_status_message(self, text: str) -> None:
        self.statusMessageLabel.setText(text)
        self.statusMessageLabel.setVisible(bool(text))

    def _create_menus(self) -> None:
        """The shell's own entries; features add theirs through the context."""
        add = self.actions_registry.add
        has_result = self._has_result
        file_menu = self.menu("&File")
        self.openAction = add(
            "&Open result JSON…",
            self._open_result,
            menu=file_menu,
            shortcut=StandardKey.Open,
            tip="Show a result saved earlier (no new measurement).",
            enabled_when=self.engine_ready,
        )
        file_menu.addSeparator().setObjectName("fileSaveSection")
        self.saveJsonAction = add(
            "&Save result",
            self._save_json,
            menu=file_menu,
            name="Save_result",
            shortcut=StandardKey.Save,
            tip="Save the result as JSON: to its file if it has one, else ask where",
            enabled_when=has_result,
        )
        self.saveAsAction = add(
            "Save result &As…",
            self._save_json_as,
            menu=file_menu,
            shortcut=StandardKey.SaveAs,
            tip="Save the result as JSON in a file you choose",
            enabled_when=has_result,
        )
        self.saveCsvAction = add(
            "Export latency &CSV…",
            self._save_csv,
            menu=file_menu,
            name="Export_latency_CSV",
            shortcut="Ctrl+Shift+E",
            tip="Write the latency rows (one per mode) as CSV",
            enabled_when=has_result,
        )
        export_menu = file_menu.addMenu("&Export chart as PNG/SVG")
        export_menu.setObjectName("exportMenu")
        file_menu.addSeparator()
        self.quitAction = add("&Quit", self.close, menu=file_menu, shortcut=StandardKey.Quit)
        self.quitAction.setMenuRole(QAction.MenuRole.QuitRole)

        # Run and Cancel head the Run menu (F5 and Esc belong to the buttons; the menu shows them).
        run_menu = self.menu("&Run")
        self.runAction = add(
            "&Run experiment\tF5",
            self.start_experiment,
            menu=run_menu,
            name="Run_experiment",
            enabled_when=self.runButton.isEnabled,
        )
        self.runAction.setToolTip("Measure this config: plain float32 vs autocast (F5)")
        self.cancelAction = add(
            "&Cancel run\tEsc",
            self.cancel_experiment,
            menu=run_menu,
            name="Cancel_run",
            enabled_when=self.cancelButton.isEnabled,
        )
        self.cancelAction.setToolTip("Stop the run at the next timing block (Esc)")
        run_menu.addSeparator()

        # View: the panes and tabs to show first, then (after this line) how everything looks.
        self.menu("&View").addSeparator().setObjectName("viewDisplaySection")
        help_menu = self.menu("&Help")
        self.helpAction = add(
            "Autocast Explorer &Help",
            self.show_help,
            menu=help_menu,
            name="Help",
            shortcut=StandardKey.HelpContents,
            tip="The keyboard shortcuts and the manual, opened at the window's section",
        )
        help_menu.addSeparator()
        self.aboutQtAction = add(
            "About &Qt…",
            QApplication.aboutQt,
            menu=help_menu,
            name="About_Qt",
            tip="The Qt version this window runs on and Qt's licence (LGPL)",
        )
        self.aboutQtAction.setMenuRole(QAction.MenuRole.AboutQtRole)
        self.aboutAction = add(
            "&About Autocast Explorer…",
            self._show_about,
            menu=help_menu,
            name="About",
            tip="Versions of torch, Qt and pyqtgraph; this CPU's low-precision features",
        )
        self.aboutAction.setMenuRole(QAction.MenuRole.AboutRole)

    def menu(self, name: str) -> QMenu:
        """The menu titled `name` ('&' ignored), created before Help if it does not exist."""
        key = name.replace("&", "").lower()
        if key in self._menus:
            return self._menus[key]
        menu = QMenu(name, self)
        menu.setObjectName(f"{key}Menu")
        menu.setToolTipsVisible(True)
        help_menu = self._menus.get("help")
        if help_menu is not None:
            self.menuBar().insertMenu(help_menu.menuAction(), menu)
        else:
            self.menuBar().addMenu(menu)
        self._menus[key] = menu
        return menu

    def _connect(self) -> None:
        self.controls.changed.connect(self._validate)
        self.controls.changed.connect(self._mark_stale)
        self.controls.changed.connect(self.context.configChanged)
        self.controls.layersRequested.connect(self._edit_layers)
        self.controls.runButton.clicked.connect(self._on_run_clicked)
        self.controls.cancelButton.clicked.connect(self.cancel_experiment)
        self._experiment.partial.connect(self._on_partial)
        self._experiment.finished.connect(self._on_finished)
        self._experiment.failed.connect(self._on_failed)
        self._experiment.cancelled.connect(self._on_cancelled)
        self._loader.progress.connect(self._on_loader_progress)
        self._loader.finished.connect(self._on_engine_loaded)
        self._loader.failed.connect(self._on_engine_failed)
        self._set_loading_state()

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

    def show_result(self, result: ExperimentResult) -> None:
        """Draw `result` in every view and the status bar (used for runs and opened files)."""
        self.result_path = None  # a new result has no file yet (open_result sets its own)
        from autocast_explorer.core.experiment.summary import verdict

        self.last_result = result
        self._shown_config, self._asked_config = self._asked_config or result.config, None
        for view in self._views:
            self._show_in(view, result)
        self.verdictLabel.setText(verdict(result))
        self._mark_stale()
        self._state_changed()
        self.resultShown.emit(result)
        self.context.resultShown.emit(result)

    def clear_results(self) -> None:
        self.last_result = None
        for view in self._views:
            view.clear()
        self.verdictLabel.setText("")
        self._mark_stale()
        self._state_changed()

    @Slot()
    def _mark_stale(self) -> None:
        """Say so while the controls describe another config than the result shown."""
        result = self.last_result
        if result is None:
            stale = False
        else:
            try:
                stale = self.current_config() != self._shown_config
            except ConfigError:
                stale = True  # the controls describe no valid config: not this result's
        self.staleLabel.setText(
            f"Result is for {config_line(result.config)} — press Run (F5) to measure this one."
            if stale and result is not None
            else ""
        )
        self.staleLabel.setVisible(stale)

    def _show_in(self, view: QWidget, result: ExperimentResult) -> None:
        try:
            view.show_result(result)
        except Exception as exc:  # one broken view must not take the window down
            log.exception("result view %r failed", view)
            self.show_banner(f"The view {view.objectName() or type(view).__name__} failed: {exc}")

    @property
    def pending_sweep(self) -> SweepSpec | None:
        """The sweep of the preset chosen last (None: that preset has no sweep)."""
        return self.context.requested_sweep

    # ---- engine loading -------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.firstPainted.emit()
            # After this paint pass has reached the screen, not inside it.
            QTimer.singleShot(0, self._after_first_paint_pass)

    @Slot()
    def _after_first_paint_pass(self) -> None:
        # The rest of the window first, then torch: one import at a time (two threads
        # importing the same package, e.g. pydantic, can see it half initialised).
        self._install_later_features()
        if self._autoload:
            self.load_engine()

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
            f"PyTorch {env.torch_version} ready · {env.cpu_model} · {env.threads_text}"
        )
        if self.last_result is None:
            self.verdictLabel.setText("Ready: press Run (F5).")
        self._validate()
        self.context.engineReady.emit()
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
                    guards.check_memory_before_running(config)  # arithmetic, /proc/meminfo
                except ConfigError as exc:
                    errors = error_fields(exc)
            if not errors and self._guard_blocked and self._guard_blocked[0] == config:
                errors = dict(self._guard_blocked[1])
        self._errors = errors
        shown = dict(errors)
        if not errors and self._user_error is not None and self._user_error[0] == config:
            shown = dict(self._user_error[1])  # shown, not blocking
        self.controls.show_errors(shown)
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
        self._state_changed()

    def _has_result(self) -> bool:
        return self.last_result is not None

    def _state_changed(self) -> None:
        registry = getattr(self, "actions_registry", None)
        if registry is not None:
            registry.refresh()
            self.context.stateChanged.emit()

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
        config = self.experiment_state.config  # valid: no edit is pending (no errors)
        if not self._trusted(config):
            return False
        self._run_config = config
        if not self._experiment.start(functools.partial(experiment_task, config)):
            self._run_config = None
            return False
        self.messageBanner.hide()
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("Starting…")
        self.verdictLabel.setText("Measuring…")
        self._update_actions()
        self.experimentStarted.emit()
        self.context.experimentStarted.emit(config)
        return True

    def _trusted(self, config: ExperimentConfig) -> bool:
        """A user model: its file asked about once (importing runs its code); its spec
        remembered for completion."""
        if not config.is_user_model:
            return True
        from autocast_explorer.gui.window.settings import (
            is_trusted_file,
            recent_specs,
            remember_spec,
            trust_file,
        )

        path = model_file(config.model)
        if path is not None and not is_trusted_file(path):
            if not self.confirm_model_file(path):
                return False
            trust_file(path)
        remember_spec(config.model)
        self.controls.family.userPage.set_recent(recent_specs())
        self._user_error = None
        return True

    def _ask_model_file(self, path: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(
            self,
            "Run code from this file?",
            f"Measuring {path} imports it, which runs its Python code with your rights. "
            "Run it only if you trust it. Import and run it?",
        )
        return answer == QMessageBox.StandardButton.Yes

    @Slot()
    def cancel_experiment(self) -> None:
        """Cancel whatever task runs on the shared runner (Esc serves every tab)."""
        if self.runner.is_running():
            training = self._run_config is not None and self._run_config.mode == "train"
            where = "training step" if training else "timing block"
            self.controls.progressLabel.setText(f"Cancelling after the current {where}…")
            self.runner.cancel()

    # Any owner's task (sweeps, probes, lessons …) drives the progress bar and Cancel; the
    # router then hands the outcome to its owner: this window hears its own runs only.

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
        """A training step of the window's own run (the router hands out only ours)."""
        self.experimentStep.emit(obj)
        self.context.experimentStep.emit(obj)

    @Slot(object)
    def _on_task_ended(self, _result: object) -> None:
        elapsed = time.monotonic() - self._run_started
        self.controls.progressBar.setValue(PROGRESS_STEPS)
        self.controls.progressLabel.setText(f"Done in {elapsed:.1f} s.")
        self._update_actions()

    @Slot(str)
    def _on_task_failed(self, message: str) -> None:
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("Failed.")
        if self._run_config is None:
            # Another feature's task (a probe, a sweep, a lesson): its panel says what failed
            # too, and the verdict of the result on screen stays as it is.
            self.show_banner(f"Failed: {message}")
        self._update_actions()

    @Slot()
    def _on_task_cancelled(self) -> None:
        self.controls.progressBar.setValue(0)
        self.controls.progressLabel.setText("Cancelled.")
        self._update_actions()

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        # What the controls asked for: the result's own config can differ by design (real
        # data sets the model's input and classes), which must not read as stale.
        self._asked_config, self._run_config = self._run_config, None
        self.show_result(result)
        self.experimentFinished.emit(result)
        self.context.experimentFinished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        own, self._run_config = self._run_config, None
        self.verdictLabel.setText(f"Run failed: {message}")
        self.show_banner(f"Run failed: {message}")
        error = self.runner.last_error
        if own is not None and isinstance(error, UserModelError):
            # The user's code failed: say so under the model field, but let Run try again
            # (the file may be fixed without the config changing).
            self._user_error = (own, error_fields(error))
        elif own is not None and isinstance(error, ConfigError):
            # A guard refused this config (too big or too slow): keep Run off until it changes.
            self._guard_blocked = (own, error_fields(error))
        self._validate()
        self.experimentFailed.emit(message)
        self.context.experimentFailed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self._run_config = None
        self.verdictLabel.setText("Run cancelled.")
        self.experimentCancelled.emit()
        self.context.experimentCancelled.emit()

    def show_banner(self, text: str) -> None:
        self.messageBanner.setText(text)
        self.messageBanner.show()

    # ---- layer editor ---------------------------------------------------------------------
    @Slot()
    def _edit_layers(self) -> None:
        from autocast_explorer.core.experiment.config import parse_widths
        from autocast_explorer.gui.features.experiment.layer_editor import LayerEditorDialog

        try:
            widths = parse_widths(self.controls.widthsEdit.text())
        except ConfigError:
            widths = ExperimentConfig().widths
        dialog = LayerEditorDialog(widths, self)
        if dialog.exec():
            self.controls.widthsEdit.setText(",".join(map(str, dialog.widths())))

    # ---- files: what the menus do after their dialog (tests and scripts call these) --------
    def write_file(self, path: str | Path, data: str | bytes, what: str) -> bool:
        """Write atomically; the status bar says so, or the banner says why not (False). A FIFO
        or device is written non-blocking and given up after a second without progress: this
        runs on the GUI thread."""
        from autocast_explorer.core.documents.files import write_atomic

        try:
            write_atomic(path, data, stall_s=GUI_STREAM_STALL_SECONDS)
        except OSError as exc:
            self.show_banner(f"Could not save {what} to {path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Saved {what} to {path}", 5000)
        return True

    def save_result(self, path: str | Path) -> bool:
        """The result shown now as JSON (.json) or its latency CSV (.csv); False if none."""
        if self.last_result is None:
            return False
        if Path(path).suffix.lower() == ".csv":
            return self.write_file(path, self.last_result.to_csv(), "the latency CSV")
        saved = self.write_file(path, self.last_result.to_json(), "the result")
        if saved:
            self.result_path = Path(path)
        return saved

    def open_result(self, path: str | Path) -> bool:
        """Show a saved result in every view; the banner names the problem (False)."""
        # Size-limited, strict JSON: ResultFileError names the file and the problem.
        from autocast_explorer.core.learning.compare import ResultFileError, load_result_file

        try:
            result = load_result_file(path)
        except ResultFileError as exc:
            self.show_banner(f"Could not open {exc}")
            return False
        self.messageBanner.hide()
        self.show_result(result)
        self.result_path = Path(path)
        self.statusBar().showMessage(f"Showing {path}", 5000)
        return True

    @property
    def compare_window(self) -> CompareWindow:
        """The Compare runs window (made on first use, not shown until asked)."""
        return self.compareRuns.window()

    def compare_files(self, paths: list[str | Path]) -> list[ResultFileError]:
        """Show Compare with these result files (and this window's run); the errors."""
        return self.compareRuns.compare_files([str(p) for p in paths])

    def export_report(self, directory: str | Path) -> Path | None:
        """Write the report of the result shown now into `directory`; report.md or None."""
        return self.reportExporter.export_to(Path(directory))

    def save_preset(self, name: str, description: str = "", replace: bool = False) -> Path | None:
        """Save the current config as your preset `name`; its file, or None (message shown).

        Never asks: an existing preset of that name is replaced only with `replace=True`.
        """
        return self.presets.save_named(name, description, replace=replace)

    def save_sweep(self, path: str | Path) -> bool:
        """The last finished sweep as JSON (.json) or CSV (.csv); False if there is none."""
        if Path(path).suffix.lower() == ".csv":
            return self.sweeps.save_sweep_csv(path)
        return self.sweeps.save_sweep_json(path)

    def _ask_save_path(self, title: str, name: str, filters: str) -> tuple[str, str]:
        return QFileDialog.getSaveFileName(self, title, str(Path.cwd() / name), filters)

    @Slot()
    def _save_json(self) -> None:
        """File › Save: the result's own file when it has one (opened or saved), else Save As."""
        if self.last_result is None:
            return
        if self.result_path is None:
            self._save_json_as()
        else:
            self.save_result(self.result_path)

    @Slot()
    def _save_json_as(self) -> None:
        if self.last_result is None:
            return
        name = self.result_path.name if self.result_path else "autocast-result.json"
        path, _ = self._ask_save_path("Save result as JSON", name, "JSON (*.json)")
        if path:
            self.save_result(path)

    @Slot()
    def _save_csv(self) -> None:
        if self.last_result is None:
            return
        path, _ = self._ask_save_path("Export latency CSV", "autocast-latency.csv", "CSV (*.csv)")
        if path:
            self.write_file(path, self.last_result.to_csv(), "the latency CSV")

    @Slot()
    def _open_result(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open result", str(Path.cwd()), "JSON (*.json)")
        if path:
            self.open_result(path)

    # ---- chart exports: one flow for every chart ------------------------------------------
    def add_chart_export(self, key: str, title: str, enabled_when: Any = None) -> QAction:
        """An entry in File › Export chart (objectName `export_<key>`)."""
        action = self.actions_registry.add(
            title,
            functools.partial(self._export, key),
            menu=self.findChild(QMenu, "exportMenu"),
            name=f"export_{key}",
            enabled_when=enabled_when,
        )
        self.exportActions[key] = action
        return action

    def export_chart(self, key: str, path: str | Path) -> bool:
        """Write chart `key` as PNG or SVG (by suffix); the banner says why not (False)."""
        from autocast_explorer.gui.charts.export import chart_bytes

        plot = self.context.chart(key)
        if plot is None:
            self.show_banner(f"There is no chart {key!r} to export.")
            return False
        try:
            data = chart_bytes(plot, Path(path).suffix.lower())
        except (OSError, ValueError) as exc:
            self.show_banner(f"Could not export the chart: {exc}")
            return False
        return self.write_file(path, data, "the chart")

    def _export(self, key: str, *_checked: object) -> None:
        from autocast_explorer.gui.charts.export import FORMATS

        path, chosen = self._ask_save_path(
            "Export chart", f"autocast-{key.replace('_', '-')}.png", ";;".join(FORMATS.values())
        )
        if not path:
            return
        if Path(path).suffix.lower() not in FORMATS:
            path += ".svg" if "svg" in chosen.lower() else ".png"
        self.export_chart(key, path)

    # ---- help -----------------------------------------------------------------------------
    @Slot()
    def show_help(self) -> HelpWindow:
        """Help › Autocast Explorer Help (F1): shortcuts and the manual at 'The window'."""
        self._help = show_help(self, self.menuBar(), self._help)
        return self._help

    @Slot()
    def _show_about(self) -> None:
        from autocast_explorer.gui.window.about import AboutDialog

        if self._about is not None:
            self._about.close()
            self._about.deleteLater()
        self._about = AboutDialog(self.environment, self)
        self._about.show()

    # ---- closing --------------------------------------------------------------------------
    def shutdown(self, timeout_s: float | None = None) -> list[str]:
        """Cancel any run and wait (bounded) for every worker thread; safe to call twice.

        Returns the threads still running when the time was up (logged as well).
        """
        from autocast_explorer.gui.tasks.runner import SHUTDOWN_TIMEOUT_S

        limit = SHUTDOWN_TIMEOUT_S if timeout_s is None else timeout_s
        return self.runner.shutdown(limit) + self._loader.shutdown(limit)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.runner.is_running():
            self.controls.progressLabel.setText("Cancelling before closing…")
        self.shutdown()
        if self._about is not None:
            self._about.close()
        super().closeEvent(event)
