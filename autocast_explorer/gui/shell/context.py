"""AppContext: the narrow face of the window that every feature gets in `install(ctx)`.

A feature never sees MainWindow, and the context knows it only as a WindowHost (a Protocol):
the window sits above the features, the context below them. A feature asks the context for the
current config (the window's ExperimentState holds it; `set_config` and `update_config` set any
field of it, shown by an input or not, and the next Run measures it), whether the engine is
ready, a task client of its own, a place for its views (by id) and actions (by menu), the banner
and status messages, file writing, chart exports, and it listens to the stream of results.
Features talk to each other only through it: a sweep preset calls `request_sweep(spec)` and
whoever shows sweeps listens to `sweepRequested`; a lesson calls `show_view("optrace")` without
knowing which tab that is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    import pyqtgraph as pg

    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.core.sweeps.spec import SweepSpec
    from autocast_explorer.gui.shell.experiment_state import ExperimentState
    from autocast_explorer.gui.shell.host import WindowHost
    from autocast_explorer.gui.tasks.client import TaskClient

#: What a feature module exposes: build your views and actions, return the handles testers use.
Feature = Callable[["AppContext"], dict[str, Any]]


class AppContext(QObject):
    """What features may use of the window; every method is safe on the GUI thread."""

    #: The config changed, or the controls' pending edit (it may now be valid, invalid or new);
    #: `experiment_state().changed` names the fields of each change of the config itself.
    configChanged = Signal()
    #: torch and the engine are loaded.
    engineReady = Signal()
    #: A result is drawn in every view (a run, an opened file, a lesson step).
    resultShown = Signal(object)
    #: The window's own run started: the ExperimentConfig it runs.
    experimentStarted = Signal(object)
    #: One training step of the window's own run finished: core's StepProgress (plain data).
    experimentStep = Signal(object)
    #: The window's own experiment run ended (not other owners' tasks).
    experimentFinished = Signal(object)
    experimentFailed = Signal(str)
    experimentCancelled = Signal()
    #: Someone (a sweep preset) asks for this sweep to be set up: a core SweepSpec.
    sweepRequested = Signal(object)
    #: A sweep finished: a core SweepResult.
    sweepFinished = Signal(object)
    #: Another top-level window (Compare) that should follow the window's look.
    windowAdded = Signal(QWidget)
    #: Something that enabled-when rules depend on changed (run state, result, engine).
    stateChanged = Signal()
    #: Every feature's views and actions exist now (a progressive window adds some after its
    #: first paint): bring anything that follows all views up to date.
    featuresInstalled = Signal()

    def __init__(self, window: WindowHost) -> None:
        super().__init__(cast(QObject, window))  # the host is the QMainWindow
        self.setObjectName("appContext")
        self._window = window
        self._views: dict[str, QWidget] = {}
        self._charts: dict[str, Callable[[], pg.PlotWidget]] = {}
        self._windows: list[QWidget] = []
        self.requested_sweep: SweepSpec | None = None

    # ---- config ---------------------------------------------------------------------------
    def config(self) -> ExperimentConfig:
        """The experiment's config; ConfigError naming the bad field while the controls hold
        an edit core refuses (Run is off then)."""
        return self._window.current_config()

    def experiment_state(self) -> ExperimentState:
        """The experiment state: its last valid `config`, and `changed(names)`."""
        return self._window.experiment_state

    def valid_config(self) -> ExperimentConfig | None:
        """The config, or None while a field is invalid."""
        try:
            return self.config()
        except ConfigError:
            return None

    def set_config(self, config: ExperimentConfig) -> None:
        """Make `config` the experiment's, every field of it (the controls follow; an edit
        pending there is dropped)."""
        self._window.set_config(config)

    def update_config(self, **changes: Any) -> ExperimentConfig:
        """Change some fields of the experiment's last valid config; returns the new config.
        ConfigError (naming the field) changes nothing."""
        config = self._window.experiment_state.config.replace(**changes)
        self._window.set_config(config)
        return config

    def dtype(self) -> str:
        """The autocast dtype the controls show, even while another field is invalid."""
        return self._window.controls.dtypeCombo.currentText()

    def input_errors(self) -> dict[str, str]:
        """Inline messages shown under the controls, by field."""
        return self._window.input_errors()

    def add_control(self, widget: QWidget) -> None:
        """Put `widget` at the top of the controls column (e.g. the preset picker)."""
        self._window.controls.layout().insertWidget(0, widget)

    def controls_column(self) -> QWidget:
        """The controls column: the scrolling inputs and the Run footer under them
        (presentation mode hides and widens it)."""
        return self._window.controlsColumn

    # ---- engine and runs ------------------------------------------------------------------
    def engine_ready(self) -> bool:
        return self._window.engine_ready()

    def environment(self) -> Environment | None:
        """This machine's Environment once the engine is loaded."""
        return self._window.environment

    def tasks(self, owner: str) -> TaskClient:
        """The task client of `owner` on the window's shared runner (one task at a time)."""
        return self._window.task_router.client(owner)

    def run_experiment(self) -> bool:
        """Start the window's run with the current config (as Run does); False if it cannot."""
        return self._window.start_experiment()

    def cancel(self) -> None:
        """Cancel whatever task runs (as Esc does)."""
        self._window.cancel_experiment()

    # ---- results --------------------------------------------------------------------------
    def last_result(self) -> ExperimentResult | None:
        return self._window.last_result

    def show_result(self, result: ExperimentResult) -> None:
        """Draw `result` in every view (a lesson's own run, an opened file)."""
        self._window.show_result(result)

    def request_sweep(self, spec: SweepSpec | None) -> None:
        """Ask for this sweep to be set up where sweeps are shown (None: forget it)."""
        self.requested_sweep = spec
        if spec is not None:
            self.sweepRequested.emit(spec)

    def publish_sweep(self, result: object) -> None:
        """Tell everyone a sweep finished (the hardware verdict uses it)."""
        self.sweepFinished.emit(result)

    def after_first_paint(self, job: Callable[[], object]) -> None:
        """Run `job` once the window has painted (slow work the first picture can do without,
        e.g. reading files), or now when the window is built all at once."""
        self._window.after_first_paint(job)

    # ---- views ----------------------------------------------------------------------------
    def add_view(
        self,
        view_id: str,
        widget: QWidget,
        title: str,
        tip: str = "",
        *,
        result_view: bool = True,
    ) -> None:
        """A tab, known by `view_id`; a result view also gets show_result/clear calls."""
        if view_id in self._views:
            raise ValueError(f"a view with id {view_id!r} exists already")
        self._views[view_id] = widget
        if result_view:
            self._window.add_view(widget, title)
        else:
            self._window.resultTabs.addTab(widget, title)
        if tip:
            tabs = self._window.resultTabs
            tabs.setTabToolTip(tabs.indexOf(widget), tip)

    def view(self, view_id: str) -> QWidget | None:
        """The view with this id while the window shows it (None once its tab is gone)."""
        widget = self._views.get(view_id)
        if widget is None or self._window.resultTabs.indexOf(widget) < 0:
            return None
        return widget

    def view_title(self, view_id: str) -> str | None:
        """The tab title of the view (None: no such view in this window)."""
        widget = self.view(view_id)
        tabs = self._window.resultTabs
        return tabs.tabText(tabs.indexOf(widget)) if widget is not None else None

    def show_view(self, view_id: str) -> QWidget | None:
        """Bring the view's tab to the front; None if this window has no such view."""
        widget = self.view(view_id)
        if widget is not None:
            self._window.resultTabs.setCurrentWidget(widget)
        return widget

    # ---- actions, menus, charts -------------------------------------------------------------
    def menu(self, name: str) -> QMenu:
        return self._window.menu(name)

    def add_action(self, text: str, handler: Callable[..., Any] | None = None, **options: Any):
        """One factory for every action: see shell.actions.ActionRegistry.add."""
        return self._window.actions_registry.add(text, handler, **options)

    def refresh_actions(self) -> None:
        """Re-check every enabled-when rule (call after your own state changed)."""
        self._window.actions_registry.refresh()

    def add_chart_export(
        self,
        key: str,
        title: str,
        chart: Callable[[], pg.PlotWidget],
        enabled_when: Callable[[], bool] | None = None,
        *,
        new_section: bool = False,
    ) -> QAction:
        """File › Export chart › `title`: one export flow (dialog, PNG/SVG, atomic write);
        `new_section`: a separator first (a feature's group of charts)."""
        self._charts[key] = chart
        return self._window.add_chart_export(key, title, enabled_when, new_section=new_section)

    def export_actions(self) -> dict[str, QAction]:
        """Every File › Export chart entry, by chart key."""
        return dict(self._window.exportActions)

    def chart(self, key: str) -> pg.PlotWidget | None:
        getter = self._charts.get(key)
        return getter() if getter is not None else None

    def export_chart(self, key: str, path: str | Path) -> bool:
        """Write chart `key` to `path` (.png or .svg); the banner says why not (False)."""
        return self._window.export_chart(key, path)

    # ---- messages and files -----------------------------------------------------------------
    def show_banner(self, text: str) -> None:
        self._window.show_banner(text)

    def hide_banner(self) -> None:
        self._window.messageBanner.hide()

    def show_message(self, text: str, ms: int = 5000) -> None:
        """A passing message in the status bar."""
        self._window.statusBar().showMessage(text, ms)

    def write_file(self, path: str | Path, data: str | bytes, what: str) -> bool:
        """Write atomically; the status bar says so, or the banner says why not (False)."""
        return self._window.write_file(path, data, what)

    # ---- windows --------------------------------------------------------------------------
    def host(self) -> QMainWindow:
        """The top-level window: parent for dialogs and docks, full screen, geometry."""
        return cast(QMainWindow, self._window)

    def add_window(self, widget: QWidget) -> None:
        """Another top-level window that should follow the text scale and theme."""
        if widget not in self._windows:
            self._windows.append(widget)
            self.windowAdded.emit(widget)
