"""The Placements tab: where autocast is entered, and where a per-call forward's time goes.

core.placements times float32 and three placements side by side for the current config:
per-call (autocast around each forward, as the tutorial does), hoisted (one autocast region
around the loop, so weight casts are cached) and pre-cast (model and input converted once,
no autocast), counting the casts each forward really makes. This tab draws that report: a
bar chart, a table and core's sentence on where the time goes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.charts.placements_chart import PlacementsChart
from autocast_explorer.gui.shell.tables import cell, row_texts

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.sweeps.placements import PlacementReport
    from autocast_explorer.gui.shell.context import AppContext
    from autocast_explorer.gui.tasks.runner import TaskState

INTRO = (
    "<b>Where autocast is entered changes what it costs.</b> <i>Per-call</i>: "
    "<code>with torch.autocast(…)</code> around each forward, as in the tutorial — every weight "
    "is cast again each time. <i>Hoisted</i>: one autocast region around the whole loop, so "
    "the weight casts are cached. <i>Pre-cast</i>: model and input converted to the low "
    "precision once, no autocast. Casts are counted, not assumed."
)
TIME_TIP = (
    "Time float32 and the three placements side by side for the config on the left, each for "
    "the measurement time set there, and count the casts per forward (F7)."
)
COLUMNS = (
    "Placement",
    "Median ms",
    "p25–p75 ms",
    "Casts per forward",
    "Bytes cast per forward",
    "Paid once",
    "vs float32",
)


def placements_task(config: ExperimentConfig, state: TaskState) -> PlacementReport:
    """On the worker thread: core.placements.measure_placements for `config`."""
    from autocast_explorer.core.sweeps.placements import measure_placements

    return measure_placements(
        config, progress=state.set_progress, cancel=state.is_interruption_requested
    )


class PlacementsTab(QWidget):
    """objectName `placementsTab`. A result view (shows a loaded result's placements too)."""

    placementsStarted = Signal()
    placementsFinished = Signal(object)
    placementsFailed = Signal(str)
    placementsCancelled = Signal()
    #: A report was drawn or cleared (the export action follows).
    shownChanged = Signal()

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.setObjectName("placementsTab")
        self._ctx = ctx
        self.client = ctx.tasks("placements")
        self.report: PlacementReport | None = None
        self._config: ExperimentConfig | None = None
        self._build()
        self.client.busyChanged.connect(self._update_actions)
        self.client.progress.connect(self._on_progress)
        self.client.finished.connect(self._on_finished)
        self.client.failed.connect(self._on_failed)
        self.client.cancelled.connect(self._on_cancelled)
        ctx.engineReady.connect(self._update_actions)
        self._update_actions()

    def _build(self) -> None:
        intro = QLabel(INTRO)
        intro.setObjectName("placementsIntro")
        intro.setWordWrap(True)
        self.timeButton = QPushButton("Time placements  (F7)")
        self.timeButton.setObjectName("placementsButton")
        font = self.timeButton.font()
        font.setBold(True)
        self.timeButton.setFont(font)
        self.timeButton.clicked.connect(self.start_placements)
        self.statusLabel = QLabel("")
        self.statusLabel.setObjectName("placementsStatusLabel")
        self.statusLabel.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.timeButton)
        top.addWidget(self.statusLabel, 1)

        self.explanationLabel = QLabel("")
        self.explanationLabel.setObjectName("placementsExplanation")
        self.explanationLabel.setWordWrap(True)
        font = self.explanationLabel.font()
        font.setPointSize(12)
        self.explanationLabel.setFont(font)
        self.explanationLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.explanationLabel.setToolTip("Where the time goes, in words (core.placements.explain).")

        self.chart = PlacementsChart()
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("placementsTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setToolTip(
            "Medians timed side by side; casts seen in one steady-state forward (core.optrace). "
            "'Paid once': casts made before the loop (hoisted's first forward, pre-cast's "
            "conversion). 'vs float32': float32 ÷ this placement round by round (20%-trimmed "
            "geometric mean) with its 95% interval; when a placement's times are spread or "
            "bimodal it can differ from the ratio of the two medians."
        )
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

        self._fit_table()
        self.configLabel = QLabel("")
        self.configLabel.setObjectName("placementsConfigLabel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(intro)
        layout.addLayout(top)
        layout.addWidget(self.explanationLabel)
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.table)
        layout.addWidget(self.configLabel)

    # ---- running -----------------------------------------------------------------------------
    @Slot()
    def start_placements(self) -> bool:
        """Time the placements of the current config; False if nothing was started."""
        if not self._ctx.engine_ready() or self.client.busy():
            return False
        try:
            config = self._ctx.config()
        except ConfigError as exc:
            self.statusLabel.setText(f"Fix the settings on the left first ({exc}).")
            return False
        if not self.client.start(functools.partial(placements_task, config)):
            return False
        self._config = config
        self.statusLabel.setText("Starting…")
        self._ctx.hide_banner()
        self.placementsStarted.emit()
        return True

    @Slot()
    def _update_actions(self) -> None:
        ready = self._ctx.engine_ready() and not self.client.busy()
        self.timeButton.setEnabled(ready)
        if not self._ctx.engine_ready():
            self.timeButton.setToolTip("Waiting for PyTorch to load…")
        elif self.client.busy():
            self.timeButton.setToolTip("Something is being measured: wait or Cancel (Esc).")
        else:
            self.timeButton.setToolTip(TIME_TIP)

    @Slot(float, str)
    def _on_progress(self, _fraction: float, message: str) -> None:
        self.statusLabel.setText(message)

    @Slot(object)
    def _on_finished(self, report: object) -> None:
        self.show_report(report, self._config)  # type: ignore[arg-type]
        self.statusLabel.setText("Done.")
        self.placementsFinished.emit(report)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.statusLabel.setText(f"Failed: {message}")
        self.placementsFailed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self.statusLabel.setText("Cancelled.")
        self.placementsCancelled.emit()

    # ---- drawing -----------------------------------------------------------------------------
    def show_report(self, report: PlacementReport, config: ExperimentConfig | None = None) -> None:
        from autocast_explorer.core.sweeps.placements import casts_text, format_bytes

        self.report = report
        self.chart.show_report(report)
        self.shownChanged.emit()
        self.explanationLabel.setText(f"<b>Where the time goes:</b> {report.explanation}")
        f32 = report.float32.median_ms
        rows: list[list[tuple[str, Any]]] = [
            [
                ("float32 (no autocast)", "float32"),
                (f"{f32:.4f}", f32),
                (f"{report.float32.p25_ms:.4f}–{report.float32.p75_ms:.4f}", None),
                ("—", 0),
                ("—", 0),
                ("—", 0),
                ("1.00×", 1.0),
            ]
        ]
        for mode in report.modes:
            lat = mode.latency
            once = (
                f"{casts_text(mode.one_time_casts)} ({format_bytes(mode.one_time_cast_bytes)})"
                if mode.one_time_casts
                else "nothing"
            )
            rows.append(
                [
                    (mode.label, mode.name),
                    (f"{lat.median_ms:.4f}", lat.median_ms),
                    (f"{lat.p25_ms:.4f}–{lat.p75_ms:.4f}", None),
                    (casts_text(mode.casts_per_forward), mode.casts_per_forward),
                    (format_bytes(mode.cast_bytes), mode.cast_bytes),
                    (once, mode.one_time_casts),
                    (report.vs_float32(mode), report.speedup(mode)),
                ]
            )
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, (text, value) in enumerate(row):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, value)
                if j > 0:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(i, j, item)
        self.table.resizeRowsToContents()
        self._fit_table()
        if config is not None:
            self.configLabel.setText(
                f"Measured for {config.title} · batch {config.batch} · "
                f"autocast {report.dtype} · {config.min_time:g} s per placement"
            )

    def _fit_table(self) -> None:
        """As tall as its rows: no empty band under four rows."""
        height = self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
        height += sum(self.table.rowHeight(i) for i in range(self.table.rowCount()))
        self.table.setFixedHeight(height + 2)

    def show_result(self, result: ExperimentResult) -> None:
        """A result that carries placements (`run --placements`, opened as JSON) shows them."""
        from autocast_explorer.core.sweeps.placements import from_result

        report = from_result(result)
        if report is not None:
            self.show_report(report, result.config)

    def clear(self) -> None:
        self.report = None
        self.chart.clear()
        self.table.setRowCount(0)
        self._fit_table()
        self.explanationLabel.setText("")
        self.configLabel.setText("")
        self.shownChanged.emit()

    # ---- read-back for tests -----------------------------------------------------------------
    def rows(self) -> list[tuple[str, ...]]:
        """The table's text, row by row."""
        return [row_texts(self.table, i) for i in range(self.table.rowCount())]

    def values(self) -> list[dict[str, Any]]:
        """The numbers behind each row: name, median_ms, casts_per_forward, cast_bytes …"""
        keys = ("name", "median_ms", None, "casts_per_forward", "cast_bytes", "one_time_casts")
        out = []
        for i in range(self.table.rowCount()):
            out.append(
                {
                    key: cell(self.table, i, j).data(Qt.ItemDataRole.UserRole)
                    for j, key in enumerate(keys)
                    if key is not None
                }
            )
        return out
