"""Compare runs (File › Compare runs…): several saved results side by side, each named by machine.

Typical use: a result made headless on a server (`autocast-explorer run --json`) next to one
from a laptop, or next to the run in the main window. Files are read by core.compare (size
limit, strict schema); every file that cannot be used is named in one message line and the
others are still shown. The charts draw core's overlay series; the table is core's
side-by-side text (the same as `autocast-explorer compare`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.certainty import SPEEDUP_MEANING
from autocast_explorer.gui.charts.compare_charts import CompareLatencyChart, CompareSpeedupChart
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.actions import make_action
from autocast_explorer.gui.shell.handles import Handle
from autocast_explorer.gui.shell.keys import Shortcut, StandardKey
from autocast_explorer.gui.shell.tables import row_header, row_texts

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.learning.compare import Comparison, ResultFileError
    from autocast_explorer.gui.shell.context import AppContext

CURRENT_SOURCE = "this window's run"
HINT = (
    "Add result files (File › Save result as JSON in the window, or "
    "<code>autocast-explorer run --json FILE</code> on another machine) to overlay their "
    "latencies and speedups."
)


class CompareWindow(QMainWindow):
    """objectName `compareWindow`: charts `compareLatencyPlot`, `compareSpeedupPlot`, table
    `compareTable`, messages `compareMessage`, the configs' difference `compareConfigDifference`."""

    def __init__(
        self,
        parent: QWidget | None = None,
        current_result: Callable[[], ExperimentResult | None] | None = None,
    ) -> None:
        """`current_result`: the result the main window shows now (Add this window's run)."""
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setObjectName("compareWindow")
        self.setWindowTitle("Compare runs · Autocast Explorer")
        self.resize(1100, 760)
        self._current_result = current_result
        self._runs: list[tuple[str, ExperimentResult]] = []
        self._comparison: Comparison | None = None

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(self._build_buttons())
        for label in self._build_messages():
            layout.addWidget(label)
        layout.addWidget(self._build_charts_and_table(), 1)
        self.setCentralWidget(central)
        self._update()

    # ---- construction ---------------------------------------------------------------------
    def _build_buttons(self) -> QHBoxLayout:
        """Add files, add this window's run, clear: each an action with its key and a button."""
        buttons = QHBoxLayout()
        self.addFilesAction = self._action(
            "&Add result files…", "Load saved result JSON files", StandardKey.Open, self.ask_files
        )
        self.addCurrentAction = self._action(
            "Add this &window's run",
            "Add the result shown in the main window",
            "Ctrl+Shift+A",
            self.add_current,
        )
        self.clearAction = self._action(
            "&Clear",
            "Remove every run from the comparison",
            "Ctrl+Shift+Backspace",  # Ctrl+Backspace deletes a word in text fields
            self.clear,
        )
        self.closeAction = self._action("Close", "Close this window", StandardKey.Close, self.close)
        for action, name in (
            (self.addFilesAction, "compareAddButton"),
            (self.addCurrentAction, "compareAddCurrentButton"),
            (self.clearAction, "compareClearButton"),
        ):
            button = QPushButton(action.text().replace("&", ""))
            button.setObjectName(name)
            button.setToolTip(action.toolTip())
            button.clicked.connect(action.trigger)
            buttons.addWidget(button)
        buttons.addStretch(1)
        return buttons

    def _build_messages(self) -> tuple[QLabel, ...]:
        """Files refused (hidden until one is), what is compared, and how the configs differ."""
        self.message = QLabel("")
        self.message.setObjectName("compareMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setStyleSheet(
            f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 6px;"
            f"border: 1px solid {style.BAD}; border-radius: 4px; font-weight: bold;"
        )
        self.message.setToolTip("Files that could not be compared, and why.")
        self.message.hide()
        self.notes = QLabel(HINT)
        self.notes.setObjectName("compareNotes")
        self.notes.setWordWrap(True)
        self.notes.setToolTip("What is compared, and where the configs differ.")
        self.configDifference = QLabel("")
        self.configDifference.setObjectName("compareConfigDifference")
        self.configDifference.setWordWrap(True)
        self.configDifference.setTextFormat(Qt.TextFormat.PlainText)
        self.configDifference.setStyleSheet(f"color: {style.WARN}; font-weight: bold;")
        self.configDifference.setToolTip(
            "Config fields that differ between the runs (the timing budget is not counted): "
            "such runs compare more than the machines."
        )
        self.configDifference.hide()
        return self.message, self.notes, self.configDifference

    def _build_charts_and_table(self) -> QSplitter:
        """Latency and speedup overlays side by side, the figures' table under them."""
        self.latencyChart = CompareLatencyChart()
        self.speedupChart = CompareSpeedupChart()
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.latencyChart)
        charts.addWidget(self.speedupChart)
        charts.setStretchFactor(0, 3)
        charts.setStretchFactor(1, 2)
        self.table = QTableWidget(0, 0)
        self.table.setObjectName("compareTable")
        self.table.setToolTip("The figures side by side: one column per run.")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(charts)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([420, 300])
        return split

    def _action(self, text: str, tip: str, keys: Shortcut, slot) -> QAction:
        action = make_action(
            self, text, slot, shortcut=keys, tip=tip, context=Qt.ShortcutContext.WindowShortcut
        )
        self.addAction(action)
        return action

    # ---- loading --------------------------------------------------------------------------
    @Slot()
    def ask_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Add result files", str(Path.cwd()), "Result JSON (*.json);;All files (*)"
        )
        if paths:
            self.add_files(paths)

    def add_files(self, paths: list[str]) -> list[ResultFileError]:
        """Load each file; the good ones join the comparison, each bad one is named."""
        from autocast_explorer.core.learning.compare import ResultFileError, load_result_file

        errors: list[ResultFileError] = []
        repeated: list[str] = []
        for path in paths:
            try:
                result = load_result_file(path)
            except ResultFileError as exc:
                errors.append(exc)
                continue
            if self._listed(result):
                repeated.append(Path(path).name)
            else:
                self._runs.append((str(path), result))
        self._show_errors(errors, tuple(repeated))
        self._update()
        return errors

    def _listed(self, result: ExperimentResult) -> bool:
        """Whether this run is compared already: the window's own run, or a file of it."""
        document = result.to_json()
        return any(r is result or r.to_json() == document for _s, r in self._runs)

    def add_result(self, result: ExperimentResult, source: str) -> None:
        if not self._listed(result):
            self._runs.append((source, result))
        self._update()

    @Slot()
    def add_current(self) -> None:
        result = self._current_result() if self._current_result is not None else None
        if result is None:
            self._show_message("The main window shows no result yet: run or open one first.")
            return
        if self._listed(result):
            self._show_message("This window's run is compared already.")
            return
        self.add_result(result, CURRENT_SOURCE)

    @Slot()
    def clear(self) -> None:
        self._runs.clear()
        self.message.hide()
        self._update()

    def _show_errors(self, errors: list[ResultFileError], repeated: tuple[str, ...] = ()) -> None:
        lines = []
        if errors:
            what = "this file" if len(errors) == 1 else f"these {len(errors)} files"
            lines += [f"Could not compare {what}:", *(str(e) for e in errors)]
        if repeated:
            lines.append(f"Compared already (the same run): {', '.join(repeated)}")
        if lines:
            self._show_message("\n".join(lines))
        else:
            self.message.hide()

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()

    # ---- drawing --------------------------------------------------------------------------
    def comparison(self) -> Comparison | None:
        return self._comparison

    def config_differences(self) -> list[str]:
        """Config fields that differ between the runs compared ([] for fewer than two runs)."""
        return self._comparison.config_differences() if self._comparison else []

    def labels(self) -> list[str]:
        """The label of each run, in order (CPU · torch · threads, plus file if repeated)."""
        return [run.label for run in self._comparison.runs] if self._comparison else []

    def _update(self) -> None:
        if not self._runs:
            self._comparison = None
            self.latencyChart.clear()
            self.speedupChart.clear()
            self.table.clear()
            self.table.setRowCount(0)
            self.table.setColumnCount(0)
            self.notes.setText(HINT)
            self.configDifference.hide()
            self.clearAction.setEnabled(False)
            return
        # core.compare loads torch (result dtypes): imported once there is something to show.
        from autocast_explorer.core.learning.compare import compare_results

        comparison = compare_results(
            [r for _s, r in self._runs], [Path(s).name for s, _r in self._runs]
        )
        self._comparison = comparison
        self.latencyChart.show_comparison(comparison)
        self.speedupChart.show_comparison(comparison)
        self._fill_table(comparison)
        differences = comparison.config_differences()
        note = (
            f"{len(comparison.runs)} run{'s' if len(comparison.runs) > 1 else ''}. "
            f"Speedup = {SPEEDUP_MEANING}; above 1.00× autocast was faster."
        )
        self.notes.setText(note)
        self.configDifference.setText(
            f"The configs differ in {', '.join(differences)}: these runs differ in more than "
            "the machine."
        )
        self.configDifference.setVisible(bool(differences))
        self.clearAction.setEnabled(True)

    def _fill_table(self, comparison: Comparison) -> None:
        from autocast_explorer.core.learning.compare import comparison_table

        table = comparison_table(comparison)
        self.table.clear()
        self.table.setColumnCount(len(comparison.runs))
        self.table.setRowCount(len(table))
        self.table.setHorizontalHeaderLabels([run.label for run in comparison.runs])
        self.table.setVerticalHeaderLabels([name for name, _values in table])
        for row, (_name, values) in enumerate(table):
            for col, value in enumerate(values):
                self.table.setItem(row, col, QTableWidgetItem(value))

    def table_rows(self) -> list[tuple[str, ...]]:
        """(figure, value per run…) as the table shows them."""
        rows = []
        for r in range(self.table.rowCount()):
            rows.append((row_header(self.table, r).text(), *row_texts(self.table, r)))
        return rows


class CompareRuns(QObject):
    """File › Compare runs…; `window()` is the Compare window, made on first use."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        self._ctx = ctx
        self._window: CompareWindow | None = None
        self.action = ctx.add_action(
            "Compare &runs…",
            self.open,
            menu="&File",
            before="fileSaveSection",
            name="Compare_runs",
            shortcut="Ctrl+Shift+O",
            tip="Overlay saved results from several machines: latencies, speedups, a table",
        )

    def window(self) -> CompareWindow:
        if self._window is None:
            self._window = CompareWindow(self._ctx.host(), self._ctx.last_result)
            self._ctx.add_window(self._window)
        return self._window

    def _show(self) -> CompareWindow:
        compare = self.window()
        compare.show()
        compare.raise_()
        compare.activateWindow()
        if compare.comparison() is None and self._ctx.last_result() is not None:
            compare.add_current()
        return compare

    @Slot()
    def open(self) -> None:
        """Show Compare; with nothing compared yet, ask for result files."""
        fresh = self.window().comparison() is None
        compare = self._show()
        if fresh:
            compare.ask_files()

    def compare_files(self, paths: list[str]) -> list[ResultFileError]:
        """Show Compare with these files added (what the menu does after its dialog)."""
        return self._show().add_files(paths)


#: The Compare runs window's owner (the window's `compare_files` goes through it).
COMPARE_RUNS = Handle("compareRuns", CompareRuns)


def install(ctx: AppContext) -> None:
    runs = CompareRuns(ctx)
    ctx.publish(COMPARE_RUNS, runs)
    ctx.publish(Handle("compareAction", QAction), runs.action)
