"""The Sweeps tab: vary batch or hidden width (or both), watch points arrive, find the crossover.

Everything but the swept parameter comes from the window's controls (`current_config()`).
Values are checked as they are typed with core's own rules (sweep_spec.parse_values,
SweepSpec, the memory guard for every point); the time guard runs in core before the first
point is measured. The sweep runs on the window's shared runner: core.sweep.run_spec's
`on_point` is the task's `set_partial`, so every SweepPoint reaches the GUI thread as soon as
it is measured and the charts grow point by point. Cancel (Esc) stops between timing blocks;
the points measured so far stay drawn.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.sweeps.spec import SweepSpec, parse_values
from autocast_explorer.gui.charts.speedup_chart import SpeedupChart
from autocast_explorer.gui.charts.speedup_heatmap import SpeedupHeatmap
from autocast_explorer.gui.charts.sweep_latency_chart import SweepLatencyChart
from autocast_explorer.gui.features.sweeps import inputs
from autocast_explorer.gui.features.sweeps.inputs import (
    INVALID_BORDER,
    RUN_SWEEP_TIP,
    TextLabel,
    default_text,
    text_key,
)
from autocast_explorer.gui.features.sweeps.sentences import crossover_text, plan_sentence
from autocast_explorer.gui.features.sweeps.worker import ThrottledProgress, sweep_task
from autocast_explorer.gui.shell.forecast_bar import ForecastBar
from autocast_explorer.gui.shell.reflow import reflow_below

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.sweeps.result import SweepPoint, SweepResult
    from autocast_explorer.gui.shell.context import AppContext

#: Names other modules and the tests import from here.
__all__ = [
    "SweepsTab",
    "TextLabel",
    "ThrottledProgress",
    "default_text",
    "sweep_task",
]


class SweepsTab(QWidget):
    """objectName `sweepsTab`. A result view (add_view) that runs and draws sweeps."""

    sweepStarted = Signal()
    #: One SweepPoint, emitted after it has been drawn.
    sweepPoint = Signal(object)
    sweepFinished = Signal(object)
    sweepFailed = Signal(str)
    sweepCancelled = Signal()
    #: The sweep shown changed (a finished sweep drawn, or cleared): file actions follow.
    shownChanged = Signal()

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.setObjectName("sweepsTab")
        self._ctx = ctx
        self.client = ctx.tasks("sweeps")
        self.last_sweep: SweepResult | None = None
        self._points: list[SweepPoint] = []
        self._running: tuple[ExperimentConfig, SweepSpec] | None = None
        self._blocked: tuple[ExperimentConfig, SweepSpec, str] | None = None
        self._errors: dict[str, str] = {}
        self._texts = inputs.default_texts()
        self._param = "batch"
        self._row_pinned = False
        self._started_at = 0.0
        self._warnings: tuple[str, ...] = ()
        self._build()
        self._connect()
        self._validate()

    # ---- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        """Inputs and buttons on top, the sentences under them, the charts below."""
        top = self._build_inputs()
        self._build_readouts()
        charts = self._build_charts()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(top)
        self.forecastBar = ForecastBar("sweep")  # a long sweep asks first
        layout.addWidget(self.forecastBar)
        for label in (
            self.planLabel,
            self.statusLabel,
            self.crossoverLabel,
            self.verdictLabel,
            self.warningsLabel,
        ):
            layout.addWidget(label)
        layout.addLayout(charts, 1)
        self._show_param_widgets()

    def _build_inputs(self) -> QHBoxLayout:
        """What to sweep and its values (errors under each), the buttons beside or under."""
        self.paramCombo = inputs.param_combo()
        self.valuesEdit = inputs.values_edit(self._texts["batch"])
        self.widthValuesEdit = inputs.width_values_edit(self._texts["width"])
        self.defaultsButton = inputs.defaults_button()
        self.runSweepButton = inputs.run_button()
        self.cancelSweepButton = inputs.cancel_button()
        self.valuesError = inputs.error_label("sweepValuesError")
        self.widthValuesError = inputs.error_label("sweepWidthValuesError")
        self.sweepError = inputs.error_label("sweepError")

        self.valuesLabel = QLabel("&Values")
        self.valuesLabel.setBuddy(self.valuesEdit)
        self.widthsLabel = QLabel("&Widths")
        self.widthsLabel.setBuddy(self.widthValuesEdit)
        sweep_label = QLabel("S&weep")
        sweep_label.setBuddy(self.paramCombo)

        controls = QGridLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.setHorizontalSpacing(8)
        controls.setVerticalSpacing(3)
        controls.addWidget(sweep_label, 0, 0)
        controls.addWidget(self.paramCombo, 0, 1)
        controls.addWidget(self.valuesLabel, 0, 2)
        controls.addWidget(self.valuesEdit, 0, 3)
        controls.addWidget(self.valuesError, 1, 3)
        controls.addWidget(self.widthsLabel, 2, 2)
        controls.addWidget(self.widthValuesEdit, 2, 3)
        controls.addWidget(self.widthValuesError, 3, 3)
        controls.addWidget(self.sweepError, 4, 0, 1, 4)
        controls.setColumnStretch(3, 1)
        # The buttons beside the inputs, or under them in a narrow tab.
        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        for button in (self.defaultsButton, self.runSweepButton, self.cancelSweepButton):
            buttons.addWidget(button)
        buttons.addStretch(1)
        reflow_below(buttons, 400)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addLayout(controls, 1)
        top.addLayout(buttons)
        top.setAlignment(buttons, Qt.AlignmentFlag.AlignTop)
        reflow_below(top, 760)
        return top

    def _build_readouts(self) -> None:
        """The plan, progress, crossover, verdict and warnings sentences."""
        self.planLabel = inputs.plan_label()
        self.statusLabel = inputs.status_label()
        self.crossoverLabel = inputs.crossover_label()
        self.verdictLabel = inputs.verdict_label()
        self.warningsLabel = inputs.warnings_label()
        for label in (self.planLabel, self.crossoverLabel, self.verdictLabel):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _build_charts(self) -> QHBoxLayout:
        """Latency on the left (a grid's row chosen above it), speedup or heatmap on the right."""
        self.latencyPlot = SweepLatencyChart()
        self.speedupPlot = SpeedupChart()
        self.speedupHeatmap = SpeedupHeatmap()
        self.speedupHeatmap.setMinimumWidth(300)  # stacked under the latency chart in a narrow tab
        self.rowCombo = QComboBox()
        self.rowCombo.setObjectName("sweepRowCombo")
        self.rowCombo.setToolTip("Grid: the row (hidden width) whose latency the left chart shows.")
        self.rowLabel = QLabel("Latency of the row with hidden width")
        self.rowLabel.setBuddy(self.rowCombo)
        row_bar = QHBoxLayout()
        row_bar.setContentsMargins(0, 0, 0, 0)
        row_bar.addWidget(self.rowLabel)
        row_bar.addWidget(self.rowCombo)
        row_bar.addStretch(1)
        self._row_bar = QWidget()
        self._row_bar.setLayout(row_bar)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(2)
        left_layout.addWidget(self._row_bar)
        left_layout.addWidget(self.latencyPlot, 1)
        self.rightStack = QStackedWidget()
        self.rightStack.setObjectName("sweepRightStack")
        self.rightStack.addWidget(self.speedupPlot)
        self.rightStack.addWidget(self.speedupHeatmap)
        charts = QHBoxLayout()
        charts.setSpacing(8)
        charts.addWidget(left, 1)
        charts.addWidget(self.rightStack, 1)
        reflow_below(charts, 720)
        return charts

    def _connect(self) -> None:
        self.paramCombo.currentIndexChanged.connect(self._on_param_changed)
        self.valuesEdit.textChanged.connect(self._on_text_edited)
        self.widthValuesEdit.textChanged.connect(self._on_text_edited)
        self.defaultsButton.clicked.connect(self.reset_values)
        self.runSweepButton.clicked.connect(self._on_run_clicked)
        self.cancelSweepButton.clicked.connect(self._ctx.cancel)
        self.rowCombo.activated.connect(self._on_row_chosen)
        self._ctx.engineReady.connect(self._validate)
        self._ctx.configChanged.connect(self._validate)
        self.client.busyChanged.connect(self._update_actions)
        self.client.progress.connect(self._on_progress)
        self.client.partial.connect(self._on_partial)
        self.forecastBar.runAnyway.connect(lambda: self.client.answer(True))
        self.forecastBar.declined.connect(self._ctx.cancel)
        self.client.finished.connect(self._on_finished)
        self.client.failed.connect(self._on_failed)
        self.client.cancelled.connect(self._on_cancelled)

    # ---- the sweep described by the inputs -------------------------------------------------
    def param(self) -> str:
        """'batch', 'width' or 'grid'."""
        return self.paramCombo.currentData()

    def set_sweep(self, param: str, values: str, width_values: str | None = None) -> None:
        """Set what to sweep as a person would (param 'batch', 'width' or 'grid')."""
        self.paramCombo.setCurrentIndex(self.paramCombo.findData(param))
        self.valuesEdit.setText(values)
        if width_values is not None:
            self._texts["width"] = width_values
            if param == "grid":
                self.widthValuesEdit.setText(width_values)

    def spec(self) -> SweepSpec:
        """The SweepSpec the inputs describe; raises ConfigError naming the bad field."""
        grid = self.param() == "grid"
        values = parse_values(self.valuesEdit.text(), "values")
        widths = parse_values(self.widthValuesEdit.text(), "width_values") if grid else ()
        return SweepSpec("batch" if grid else self.param(), values, widths)

    @Slot()
    def reset_values(self) -> None:
        self._texts = inputs.default_texts()
        self._load_texts()

    def _load_texts(self) -> None:
        param = self.param()
        self.valuesEdit.setText(self._texts[text_key(param)])
        self.widthValuesEdit.setText(self._texts["width"])

    @Slot(int)
    def _on_param_changed(self, _index: int) -> None:
        self._load_texts()
        self._show_param_widgets()
        self._validate()

    @Slot()
    def _on_text_edited(self) -> None:
        param = self.param()
        self._texts[text_key(param)] = self.valuesEdit.text()
        if param == "grid":
            self._texts["width"] = self.widthValuesEdit.text()
        self._validate()

    def _show_param_widgets(self) -> None:
        """Inputs follow the param chosen; the charts follow the sweep shown (if any)."""
        grid = self.param() == "grid"
        for widget in (self.widthsLabel, self.widthValuesEdit):
            widget.setVisible(grid)
        self.valuesLabel.setText("&Batches" if grid else "&Values")
        shown = self._shown()
        grid_shown = shown[1].is_grid if shown is not None else grid
        self._row_bar.setVisible(shown is not None and grid_shown)
        self.rightStack.setCurrentWidget(self.speedupHeatmap if grid_shown else self.speedupPlot)

    def _shown(self) -> tuple[ExperimentConfig, SweepSpec] | None:
        """The config and spec of the sweep running or drawn now (None: nothing yet)."""
        if self._running is not None:
            return self._running
        if self.last_sweep is not None:
            return self.last_sweep.config, self.last_sweep.spec
        return None

    # ---- validation --------------------------------------------------------------------------
    @Slot()
    def _validate(self) -> None:
        """Core's rules on the values, the window's config and the memory guard, shown inline."""
        errors: dict[str, str] = {}
        spec: SweepSpec | None = None
        config: ExperimentConfig | None = None
        try:
            spec = self.spec()
        except ConfigError as exc:
            key = exc.field if exc.field in ("values", "width_values") else "sweep"
            errors[key] = exc.rule if key != "sweep" else str(exc)
        try:
            config = self._ctx.config()
        except ConfigError as exc:
            errors["sweep"] = f"Fix the settings on the left first ({exc.field}: {exc.rule})."
        if spec is not None and config is not None:
            errors.update(self._check_points(config, spec))
            if self._blocked and self._blocked[:2] == (config, spec):
                errors["sweep"] = self._blocked[2]
        self._errors = errors
        for key, label, edit in (
            ("values", self.valuesError, self.valuesEdit),
            ("width_values", self.widthValuesError, self.widthValuesEdit),
            ("sweep", self.sweepError, None),
        ):
            message = errors.get(key, "")
            label.setText(message)
            label.setVisible(bool(message))
            if edit is not None:
                edit.setStyleSheet(INVALID_BORDER if message else "")
        self._update_plan(config, spec)
        self._update_actions()

    def _check_points(self, config: ExperimentConfig, spec: SweepSpec) -> dict[str, str]:
        try:
            planned = spec.plan(config)
        except ConfigError as exc:
            key = "values" if exc.field in ("batch", "widths") else "sweep"
            return {key: exc.rule}
        if not self._ctx.engine_ready():
            return {}
        from autocast_explorer.core.experiment import memory_bound

        for point in planned:  # memory only: cheap arithmetic; time is checked by core
            try:
                memory_bound.check_memory_before_running(point.config)
            except memory_bound.GuardError as exc:
                return {"sweep": f"Too much memory at {point.name}: {exc.rule}."}
        return {}

    def _update_plan(self, config: ExperimentConfig | None, spec: SweepSpec | None) -> None:
        if config is None or spec is None:
            self.planLabel.setText("")
        else:
            self.planLabel.setText(plan_sentence(config, spec))

    def input_errors(self) -> dict[str, str]:
        """Inline messages now shown, by field ('values', 'width_values', 'sweep')."""
        return dict(self._errors)

    @Slot()
    def _update_actions(self) -> None:
        ready = self._ctx.engine_ready()
        busy = self.client.busy()
        self.runSweepButton.setEnabled(ready and not busy and not self._errors)
        self.cancelSweepButton.setEnabled(self.client.is_running())
        if not ready:
            tip = "Waiting for PyTorch to load…"
        elif busy:
            tip = "Something is being measured: wait or Cancel (Esc) first."
        elif self._errors:
            tip = "Fix the highlighted input first."
        else:
            tip = RUN_SWEEP_TIP
        self.runSweepButton.setToolTip(tip)

    # ---- running -----------------------------------------------------------------------------
    @Slot()
    def _on_run_clicked(self) -> None:
        self.start_sweep()

    def start_sweep(self) -> bool:
        """Start the sweep the inputs describe; False (nothing started) if it cannot run."""
        self._validate()
        if not self.runSweepButton.isEnabled():
            return False
        config, spec = self._ctx.config(), self.spec()
        if not self.client.start(functools.partial(sweep_task, config, spec)):
            return False
        self._running = (config, spec)
        self.last_sweep = None  # the charts now show the new sweep; only it can be saved
        self.shownChanged.emit()
        self._points = []
        self._row_pinned = False
        self._started_at = time.monotonic()
        self._begin_charts(config, spec)
        self.crossoverLabel.setText("")
        self.verdictLabel.setText("")
        self._set_warnings(())
        self.statusLabel.setText(f"Checking the memory and time guards for {len(spec)} points…")
        self._ctx.hide_banner()
        self._update_actions()
        self.sweepStarted.emit()
        return True

    def _begin_charts(self, config: ExperimentConfig, spec: SweepSpec) -> None:
        param = "batch" if spec.is_grid else spec.param
        self.rightStack.setCurrentWidget(self.speedupHeatmap if spec.is_grid else self.speedupPlot)
        self.rowCombo.clear()
        if spec.is_grid:
            for width in spec.width_values:
                self.rowCombo.addItem(str(width), width)
            self.speedupHeatmap.begin(spec.values, spec.width_values)
        else:
            self.speedupPlot.begin(param, spec.values)
        self._row_bar.setVisible(spec.is_grid)
        self.latencyPlot.begin(param, spec.values, config.dtype, self._row_subtitle(spec))

    def _row_subtitle(self, spec: SweepSpec) -> str:
        if not spec.is_grid:
            return ""
        return f"width {self.rowCombo.currentData()}"

    @Slot(float, str)
    def _on_progress(self, _fraction: float, message: str) -> None:
        self.statusLabel.setText(message)

    @Slot(object)
    def _on_partial(self, point: object) -> None:
        from autocast_explorer.core.experiment.forecast import Forecast

        if isinstance(point, Forecast):  # long: asked before the first point
            self.forecastBar.ask(point)
            return
        self._points.append(point)  # type: ignore[arg-type]
        if self._running is not None:
            spec = self._running[1]
            if spec.is_grid and not self._row_pinned:
                index = self.rowCombo.findData(point.value2)  # type: ignore[attr-defined]
                if index != self.rowCombo.currentIndex():
                    self.rowCombo.setCurrentIndex(index)
                    self.latencyPlot.begin(
                        "batch", spec.values, self._running[0].dtype, self._row_subtitle(spec)
                    )
            self._draw(spec, self._points, final=None)
        self.sweepPoint.emit(point)

    def _draw(self, spec: SweepSpec, points: list, final: SweepResult | None) -> None:
        if spec.is_grid:
            width = self.rowCombo.currentData()
            self.latencyPlot.show_points([p for p in points if p.value2 == width])
            self.speedupHeatmap.show_points(points)
        else:
            self.latencyPlot.show_points(points)
            self.speedupPlot.show_points(points)
        self.crossoverLabel.setText(crossover_text(spec, points, final))

    @Slot(int)
    def _on_row_chosen(self, _index: int) -> None:
        self._row_pinned = True
        shown = self._shown()
        if shown is None or not shown[1].is_grid:
            return
        config, spec = shown
        self.latencyPlot.begin("batch", spec.values, config.dtype, self._row_subtitle(spec))
        width = self.rowCombo.currentData()
        self.latencyPlot.show_points([p for p in self._points if p.value2 == width])

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        self.forecastBar.hide()
        self._running = None
        self.show_sweep(result)  # type: ignore[arg-type]
        elapsed = time.monotonic() - self._started_at
        self.statusLabel.setText(f"Done: {len(self._points)} points in {elapsed:.1f} s.")
        self._update_actions()
        self.sweepFinished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.forecastBar.hide()
        running, self._running = self._running, None
        error = self.client.last_error
        if running is not None and isinstance(error, ConfigError):
            title = {"memory": "Too much memory", "time": "Too slow"}.get(error.field, "Refused")
            self._blocked = (*running, f"{title}: {error.rule}")
            self.statusLabel.setText("Refused before measuring: see the message above.")
        else:
            self.statusLabel.setText(f"Failed after {len(self._points)} points: {message}")
        self._validate()
        self.sweepFailed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self.forecastBar.hide()
        running, self._running = self._running, None
        total = len(running[1]) if running else 0
        self.statusLabel.setText(
            f"Cancelled after {len(self._points)} of {total} points (those stay drawn; "
            "no verdict for a partial sweep)."
        )
        self._update_actions()
        self.sweepCancelled.emit()

    # ---- showing a finished sweep ------------------------------------------------------------
    def show_sweep(self, result: SweepResult) -> None:
        """Draw a finished sweep (from a run, or synthetic in tests): charts and sentences."""
        self.last_sweep = result
        self._points = list(result.points)
        spec = result.spec
        self._row_pinned = False
        self._begin_charts(result.config, spec)
        if spec.is_grid:
            self.rowCombo.setCurrentIndex(self.rowCombo.count() - 1)
            self.latencyPlot.begin(
                "batch", spec.values, result.config.dtype, self._row_subtitle(spec)
            )
        self._draw(spec, self._points, final=result)
        self.shownChanged.emit()
        self.verdictLabel.setText(f"<b>Verdict:</b> {result.verdict.sentence}")
        self._set_warnings(result.warnings)
        self._show_param_widgets()

    def _set_warnings(self, warnings: tuple[str, ...]) -> None:
        """One line per warning, cut to the tab's width; the full text is the tooltip."""
        self._warnings = tuple(warnings)
        self.warningsLabel.setToolTip("\n\n".join(self._warnings))
        self.warningsLabel.setVisible(bool(self._warnings))
        self._elide_warnings()

    def _elide_warnings(self) -> None:
        metrics = QFontMetrics(self.warningsLabel.font())
        width = max(self.width() - 24, 200)
        self.warningsLabel.setText(
            "\n".join(
                metrics.elidedText(f"⚠ {w}", Qt.TextElideMode.ElideRight, width)
                for w in self._warnings
            )
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide_warnings()

    def warnings(self) -> tuple[str, ...]:
        """The full warnings of the sweep shown (the label shows them cut to one line each)."""
        return self._warnings

    def points(self) -> list[SweepPoint]:
        """The points drawn now (streamed so far, or the last finished sweep's)."""
        return list(self._points)

    # ---- result view contract ----------------------------------------------------------------
    def show_result(self, _result: ExperimentResult) -> None:
        """A finished single run: the sweep's base config may have changed; re-check inputs."""
        self._validate()

    def clear(self) -> None:
        self.last_sweep = None
        self._points = []
        self.latencyPlot.clear()
        self.speedupPlot.clear()
        self.speedupHeatmap.clear()
        for label in (self.crossoverLabel, self.verdictLabel, self.statusLabel):
            label.setText("")
        self._set_warnings(())
        self.shownChanged.emit()

    # ---- files -------------------------------------------------------------------------------
    def charts(self) -> dict[str, Any]:
        """Exportable charts by key."""
        return {
            "sweep_latency": self.latencyPlot,
            "speedup": self.speedupPlot,
            "heatmap": self.speedupHeatmap,
        }
