"""AppContext: the narrow face of the window that every feature gets in `install(ctx)`.

A feature never sees MainWindow, and the context knows it only as a WindowHost (a Protocol):
the window sits above the features, the context below them. A feature asks the context for the
current config (the window's ExperimentState holds it; `set_config` and `update_config` set any
field of it, shown by an input or not, and the next Run measures it), whether the engine is
ready, a task client of its own, a place for its views (by id) and actions (by menu), the banner
and status messages, file writing, chart exports, and it listens to the stream of results.
Features talk to each other only through it: a sweep preset calls `request_sweep(spec)` and
whoever shows sweeps listens to `sweepRequested`; a lesson calls `show_view("dtype")` without
knowing which tab that chart is in. Views (tabs, and the parts of a tab others point at) share
one registry of ids; objects others call are published under typed handles (shell/handles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.shell.handles import Handle, Handles

if TYPE_CHECKING:
    import pyqtgraph as pg

    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.core.sweeps.spec import SweepSpec
    from autocast_explorer.gui.shell.experiment_state import ExperimentState
    from autocast_explorer.gui.shell.host import WindowHost
    from autocast_explorer.gui.tasks.client import TaskClient

#: What a feature module exposes: build your views and actions, publish your handles.
Feature = Callable[["AppContext"], None]
T = TypeVar("T")


@dataclass(frozen=True)
class _View:
    """One id of the view registry: the widget, the tab page that holds it (itself for a tab),
    and what a pointer at it frames (the widget, or the part of it that answers)."""

    widget: QWidget
    page: QWidget
    focus: QWidget


class AppContext(QObject):
    """What features may use of the window; every method is safe on the GUI thread."""

    #: The config changed, or the controls' pending edit (it may now be valid, invalid or new);
    #: `experiment_state().changed` names the fields of each change of the config itself.
    configChanged = Signal()
    #: torch is imported: Run is enabled (the engine's imports follow, then engineReady).
    torchLoaded = Signal()
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
    #: The sweep the next sweep run is asked for changed: a SweepSpec, or None (a preset
    #: without one, a lesson step) — the preset list names a sweep preset only with its sweep.
    requestedSweepChanged = Signal(object)
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
        self._views: dict[str, _View] = {}
        self._handles = Handles()
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

    def bind_inputs(self, binding: Any) -> Callable[[], None]:
        """Bind inputs a feature shows elsewhere (a tab's) to config fields as the controls bind
        their own: `binding` is a features/experiment/bindings.py Binding. A change of its
        fields from elsewhere is written to them; their edits reach the state only as a valid
        config (else the message at the top of the controls, and Run off). The state is shown
        in them now; returns what to call when they are edited."""
        bindings = self._window.controls.bindings
        bindings.add(binding)
        binding.write(self._window.experiment_state.config)
        name = binding.name
        return lambda: bindings.edited(name)

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
        changed = spec != self.requested_sweep
        self.requested_sweep = spec
        if spec is not None:
            self.sweepRequested.emit(spec)
        if changed:
            self.requestedSweepChanged.emit(spec)

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
        focus: QWidget | None = None,
    ) -> None:
        """A tab, known by `view_id`; a result view also gets show_result/clear calls. `focus`:
        the part a pointer at this view frames (a lesson's answer), else the whole tab."""
        self._register(view_id, _View(widget, widget, focus or widget))
        if result_view:
            self._window.add_view(widget, title)
        else:
            self._window.resultTabs.addTab(widget, title)
        if tip:
            tabs = self._window.resultTabs
            tabs.setTabToolTip(tabs.indexOf(widget), tip)

    def add_view_part(self, view_id: str, widget: QWidget, within: str) -> None:
        """A part of the tab of view `within` (one of its charts), known by `view_id`:
        `show_view(view_id)` brings that tab forward and a pointer frames the part."""
        page = self._views[within].page
        self._register(view_id, _View(widget, page, widget))

    def _register(self, view_id: str, view: _View) -> None:
        if view_id in self._views:
            raise ValueError(f"a view with id {view_id!r} exists already")
        self._views[view_id] = view

    def _shown(self, view_id: str) -> _View | None:
        view = self._views.get(view_id)
        if view is None or self._window.resultTabs.indexOf(view.page) < 0:
            return None
        return view

    def view(self, view_id: str) -> QWidget | None:
        """The view with this id while the window shows its tab (None once the tab is gone)."""
        view = self._shown(view_id)
        return view.widget if view is not None else None

    def view_focus(self, view_id: str) -> QWidget | None:
        """What a pointer at the view frames (its answering part, or the view itself)."""
        view = self._shown(view_id)
        return view.focus if view is not None else None

    def view_title(self, view_id: str) -> str | None:
        """The title of the view's tab (None: no such view in this window)."""
        view = self._shown(view_id)
        tabs = self._window.resultTabs
        return tabs.tabText(tabs.indexOf(view.page)) if view is not None else None

    def show_view(self, view_id: str) -> QWidget | None:
        """Bring the view's tab to the front; None if this window has no such view."""
        view = self._shown(view_id)
        if view is None:
            return None
        self._window.resultTabs.setCurrentWidget(view.page)
        return view.widget

    def view_ids(self) -> tuple[str, ...]:
        """Every registered view id, tabs and parts, in the order they were added."""
        return tuple(self._views)

    # ---- handles --------------------------------------------------------------------------
    def publish(self, handle: Handle[T], value: T) -> T:
        """Make `value` findable by `handle` (and `window.<name>` for testers)."""
        return self._handles.publish(handle, value)

    def handle(self, handle: Handle[T]) -> T:
        """What a feature published under `handle` (LookupError naming it if none did)."""
        return self._handles.get(handle)

    def published(self) -> dict[str, object]:
        """Every published handle's object by name (the window's attributes for testers)."""
        return self._handles.by_name()

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
