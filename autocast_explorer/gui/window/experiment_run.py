"""The window's own experiment: loading the engine, checking the controls with core's rules,
Run and Cancel, and the progress of whatever task runs on the shared runner.

Start-up: torch and core.engine are imported on a worker thread ("Loading PyTorch…",
engine_loading.py); Run is enabled once torch is in and the controls hold a config core
accepts (a run pressed before the engine's imports end waits for them). Experiments run on the
window's runner; any owner's task (sweeps, probes, lessons …) drives the progress bar and
Cancel, and the router then hands the outcome to its owner: this object hears its own runs only.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QLabel, QWidget

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.spec import model_file
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.features.experiment.controls import PROGRESS_STEPS, ControlsPanel
from autocast_explorer.gui.features.experiment.field_errors import error_fields
from autocast_explorer.gui.tasks.client import TaskRouter
from autocast_explorer.gui.tasks.runner import TaskRunner, TaskState
from autocast_explorer.gui.window.engine_loading import (
    ENGINE_TEXT,
    LOADING_TEXT,
    TORCH_LOADED,
    import_shared_packages,
    load_engine_task,
    wait_for_engine_imports,
)

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment

#: The task owner of the window's own runs on the shared runner.
EXPERIMENT_OWNER = "experiment"
RUN_TIP = "Measure this config: plain float32 vs autocast, on a worker thread (F5)."


def experiment_task(config: ExperimentConfig, state: TaskState) -> ExperimentResult:
    """One experiment on the worker thread; the engine checks `cancel` between timing blocks.
    A long run's forecast is a question to the window (the run waits for Run anyway or
    Cancel: TaskState.ask)."""
    wait_for_engine_imports(
        state.is_interruption_requested, waiting=lambda: state.set_progress(0.0, ENGINE_TEXT)
    )
    from autocast_explorer.core.experiment import engine

    return engine.run_experiment(
        config,
        progress=state.set_progress,
        cancel=state.is_interruption_requested,
        partial=state.set_partial,
        confirm=state.ask,
    )


class RunHost(Protocol):
    """What the run needs of the window: the result shown, the messages, and where this
    machine's Environment is kept (a public attribute testers read)."""

    last_result: ExperimentResult | None
    environment: Environment | None

    @property
    def messageBanner(self) -> QLabel: ...

    def show_banner(self, text: str) -> None: ...
    def show_result(self, result: ExperimentResult) -> None: ...


class ExperimentRun(QObject):
    """Run, Cancel and the engine for one window; the window relays the signals."""

    #: A run started: the ExperimentConfig it measures.
    started = Signal(object)
    #: One training step of our run finished: core's StepProgress.
    step = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    #: Our run is forecast to take long: core's Forecast, shown with Run anyway and Cancel.
    forecastShown = Signal(object)
    #: torch is imported: Run may be enabled (the engine's imports follow).
    torchLoaded = Signal()
    #: torch and the engine are loaded (the host's `environment` is set).
    engineLoaded = Signal()
    #: The loader ended, loaded (after `engineLoaded`) or failed.
    engineSettled = Signal()
    #: Run state, errors or engine changed: enabled-when rules should be checked again.
    stateChanged = Signal()

    def __init__(
        self,
        window: QObject,
        host: RunHost,
        controls: ControlsPanel,
        verdict: QLabel,
        confirm_model_file: Callable[[str], bool],
        run_asked: Callable[[ExperimentConfig], None],
    ) -> None:
        super().__init__(window)
        self._host = host
        self._controls = controls
        self.runner = TaskRunner(window, name="experiment")
        self._loader = TaskRunner(window, name="engine-loader")
        # Progress and Cancel serve any task: connected before the router hands outcomes out.
        self._follow_every_task()
        self.router = TaskRouter(self.runner, window)
        self._client = self.router.client(EXPERIMENT_OWNER)
        self._verdict = verdict
        self._confirm = confirm_model_file
        self._run_asked = run_asked
        self._ready = False
        self._torch_in = False
        self._before_engine: Callable[[], object] | None = None
        self._engine_error = ""
        self._errors: dict[str, str] = {}
        self._user_error: tuple[ExperimentConfig, dict[str, str]] | None = None
        self._guard_blocked: tuple[ExperimentConfig, dict[str, str]] | None = None
        self._config: ExperimentConfig | None = None
        self._started_at = 0.0
        self._follow_own_runs()

    def _follow_every_task(self) -> None:
        runner = self.runner
        runner.started.connect(self._on_any_started)
        runner.progress.connect(self._on_progress)
        runner.finished.connect(self._on_any_ended)
        runner.failed.connect(self._on_any_failed)
        runner.cancelled.connect(self._on_any_cancelled)

    def _follow_own_runs(self) -> None:
        client, loader = self._client, self._loader
        client.partial.connect(self._on_partial)
        bar = self._controls.forecastBar
        bar.runAnyway.connect(self._on_run_anyway)
        bar.declined.connect(self.cancel)
        client.finished.connect(self._on_finished)
        client.failed.connect(self._on_failed)
        client.cancelled.connect(self._on_cancelled)
        loader.progress.connect(self._on_loader_progress)
        loader.partial.connect(self._on_loader_asks)
        loader.finished.connect(self._on_engine_loaded)
        loader.failed.connect(self._on_engine_failed)
        self._controls.progressBar.setRange(0, 0)  # busy until the engine is loaded
        self._controls.progressLabel.setText(LOADING_TEXT)
        self._verdict.setText(LOADING_TEXT)

    # ---- the engine -----------------------------------------------------------------------
    def load_engine(self, before_engine: Callable[[], object] | None = None) -> bool:
        """Start the loader (False: loaded, loading or failed already); `before_engine` runs
        on the GUI thread once torch is in, before the engine's imports (the preset list)."""
        if self._ready or self._loader.is_running() or self._engine_error:
            return False
        self._before_engine = before_engine
        return self._loader.start(load_engine_task)

    def engine_ready(self) -> bool:
        return self._ready

    def engine_loading(self) -> bool:
        """The loader is importing torch and the engine now."""
        return self._loader.is_running()

    def shutdown(self, limit_s: float) -> list[str]:
        return self.runner.shutdown(limit_s) + self._loader.shutdown(limit_s)

    @Slot(float, str)
    def _on_loader_progress(self, _fraction: float, message: str) -> None:
        if not self.runner.is_running():
            self._controls.progressLabel.setText(message)

    @Slot(object)
    def _on_loader_asks(self, question: object) -> None:
        if question != TORCH_LOADED:
            return
        self._torch_in = True
        self._controls.progressBar.setRange(0, PROGRESS_STEPS)
        self._controls.progressBar.setValue(0)
        self._controls.progressLabel.setText(ENGINE_TEXT)
        if self._host.last_result is None:
            self._verdict.setText("Ready: press Run (F5).")
        self.validate()
        self.torchLoaded.emit()
        # After Run is drawn enabled: the GUI thread's own imports, then the engine's.
        QTimer.singleShot(0, self._let_engine_load)

    @Slot()
    def _let_engine_load(self) -> None:
        job, self._before_engine = self._before_engine, None
        try:
            if job is not None:
                job()
            import_shared_packages()  # here, before the loader imports them too
        finally:
            self._loader.answer(True)  # whatever happened here, the engine must still load

    @Slot(object)
    def _on_engine_loaded(self, env: Environment) -> None:
        self._ready = self._torch_in = True
        self._host.environment = env
        if not self.runner.is_running():  # a run pressed once torch was in keeps its progress
            bar = self._controls.progressBar
            bar.setRange(0, PROGRESS_STEPS)
            bar.setValue(0)
            self._controls.progressLabel.setText(
                f"PyTorch {env.torch_version} ready · {env.cpu_model} · {env.threads_text}"
            )
            if self._host.last_result is None:
                self._verdict.setText("Ready: press Run (F5).")
        self.validate()
        self.engineLoaded.emit()
        self.engineSettled.emit()

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self._engine_error = message
        self._controls.progressBar.setRange(0, PROGRESS_STEPS)
        self._controls.progressBar.setValue(0)
        self._controls.progressLabel.setText("PyTorch could not be loaded.")
        self._verdict.setText("PyTorch could not be loaded.")
        self._host.show_banner(
            f"PyTorch could not be loaded, so nothing can be measured: {message}"
        )
        self.update_actions()
        self.engineSettled.emit()

    # ---- validation -----------------------------------------------------------------------
    @Slot()
    def validate(self) -> None:
        """Check the controls with core's rules; show messages inline; enable Run or not."""
        errors: dict[str, str] = {}
        config: ExperimentConfig | None = None
        try:
            config = self._controls.config()
        except ConfigError as exc:
            errors = error_fields(exc)
        else:
            from autocast_explorer.core.experiment import memory_bound

            try:
                memory_bound.check_memory_before_running(config)  # arithmetic, no torch
            except ConfigError as exc:
                errors = error_fields(exc)
            if not errors and self._guard_blocked and self._guard_blocked[0] == config:
                errors = dict(self._guard_blocked[1])
        self._errors = errors
        shown = dict(errors)
        if not errors and self._user_error is not None and self._user_error[0] == config:
            shown = dict(self._user_error[1])  # shown, not blocking
        self._controls.show_errors(shown)
        self.update_actions()

    def update_actions(self) -> None:
        running = self.runner.is_running()
        can_run = self._torch_in and not running and not self._errors and not self._engine_error
        self._controls.runButton.setEnabled(can_run)
        self._controls.cancelButton.setEnabled(running)
        if self._engine_error:
            reason = "PyTorch could not be loaded (see the message above the charts)."
        elif not self._torch_in:
            reason = "Waiting for PyTorch to load…"
        elif running:
            reason = "A run is in progress: Cancel (Esc) first."
        elif self._errors:
            reason = "Fix the highlighted input first."
        else:
            reason = RUN_TIP
        self._controls.runButton.setToolTip(reason)
        self.stateChanged.emit()

    # ---- running --------------------------------------------------------------------------
    def start(self) -> bool:
        """Start a run with the current config; False (and nothing started) if it cannot."""
        if not self._torch_in or self._engine_error or self.runner.is_running():
            return False
        self.validate()
        if self._errors:
            return False
        config = self._controls.config()  # valid: no edit is pending (no errors)
        if not self._trusted(config):
            return False
        if self._user_error is not None:
            # The user's file may have been fixed: the old failure goes now, as a data file's
            # does; a new failure shows again when this run ends.
            self._user_error = None
            self._controls.show_errors(self._errors)
        self._config = config
        if not self._client.start(functools.partial(experiment_task, config)):
            self._config = None
            return False
        self._host.messageBanner.hide()
        self._controls.progressBar.setValue(0)
        self._controls.progressLabel.setText("Starting…")
        self._verdict.setText("Measuring…")
        self.update_actions()
        self.started.emit(config)
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
            if not self._confirm(path):
                # Said under the model field (input_errors()["model"]), as a failure would be;
                # Run stays on and asks again.
                declined = f'not run: the answer to "Run code from this file?" was No ({path})'
                self._user_error = (config, {"model": f"{config.model}: {declined}"})
                self.validate()
                return False
            trust_file(path)
        remember_spec(config.model)
        self._controls.family.userPage.set_recent(recent_specs())
        return True

    def cancel(self) -> None:
        """Cancel whatever task runs on the shared runner (Esc serves every tab)."""
        if self.runner.is_running():
            training = self._config is not None and self._config.mode == "train"
            where = "training step" if training else "timing block"
            self._controls.progressLabel.setText(f"Cancelling after the current {where}…")
            self.runner.cancel()

    # Any owner's task drives the progress bar and Cancel.
    @Slot()
    def _on_any_started(self) -> None:
        self._started_at = time.monotonic()
        self.update_actions()

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        self._controls.progressBar.setValue(round(fraction * PROGRESS_STEPS))
        self._controls.progressLabel.setText(message)

    @Slot(object)
    def _on_any_ended(self, _result: object) -> None:
        self._controls.forecastBar.hide()
        elapsed = time.monotonic() - self._started_at
        self._controls.progressBar.setValue(PROGRESS_STEPS)
        self._controls.progressLabel.setText(f"Done in {elapsed:.1f} s.")
        self.update_actions()

    @Slot(str)
    def _on_any_failed(self, message: str) -> None:
        self._controls.forecastBar.hide()
        self._controls.progressBar.setValue(0)
        self._controls.progressLabel.setText("Failed.")
        if self._config is None:
            # Another feature's task (a probe, a sweep, a lesson): its panel says what failed
            # too, and the verdict of the result on screen stays as it is.
            self._host.show_banner(f"Failed: {message}")
        self.update_actions()

    @Slot()
    def _on_any_cancelled(self) -> None:
        self._controls.forecastBar.hide()
        self._controls.progressBar.setValue(0)
        self._controls.progressLabel.setText("Cancelled.")
        self.update_actions()

    # Our own runs only.
    @Slot(object)
    def _on_partial(self, item: object) -> None:
        """A training step's losses, or a long run's forecast: a question for the person."""
        from autocast_explorer.core.experiment.forecast import Forecast

        if isinstance(item, Forecast):
            self._controls.progressLabel.setText("Waiting: run anyway, or cancel?")
            self._controls.forecastBar.ask(item)
            self.forecastShown.emit(item)
        else:
            self.step.emit(item)

    @Slot()
    def _on_run_anyway(self) -> None:
        self._controls.progressLabel.setText("Starting…")
        self._client.answer(True)

    @Slot(object)
    def _on_finished(self, result: ExperimentResult) -> None:
        config, self._config = self._config, None
        if config is not None:
            self._run_asked(config)
        self._host.show_result(result)
        self.finished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        own, self._config = self._config, None
        self._verdict.setText(f"Run failed: {message}")
        self._host.show_banner(f"Run failed: {message}")
        error = self.runner.last_error
        if own is not None and isinstance(error, UserModelError):
            # The user's code failed: say so under the model field, but let Run try again
            # (the file may be fixed without the config changing).
            self._user_error = (own, error_fields(error))
        elif own is not None and isinstance(error, ConfigError):
            # A guard refused this config (too big or too slow): keep Run off until it changes.
            self._guard_blocked = (own, error_fields(error))
        self.validate()
        self.failed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self._config = None
        self._verdict.setText("Run cancelled.")
        self.cancelled.emit()


def edit_layers(parent: QWidget, controls: ControlsPanel) -> None:
    """The layer editor for the widths the controls show (the defaults if they do not parse)."""
    from autocast_explorer.core.experiment.config_rules import parse_widths
    from autocast_explorer.gui.features.experiment.layer_editor import LayerEditorDialog

    try:
        widths = parse_widths(controls.widthsEdit.text())
    except ConfigError:
        widths = ExperimentConfig().widths
    dialog = LayerEditorDialog(widths, parent)
    if dialog.exec():
        controls.widthsEdit.setText(",".join(map(str, dialog.widths())))


def ask_model_file(parent: QWidget, path: str) -> bool:
    """Whether to import (and so run) the model file `path`: asked once per file."""
    from PySide6.QtWidgets import QMessageBox

    answer = QMessageBox.question(
        parent,
        "Run code from this file?",
        f"Measuring {path} imports it, which runs its Python code with your rights. "
        "Run it only if you trust it. Import and run it?",
    )
    return answer == QMessageBox.StandardButton.Yes
