"""The Plan tab: a criterion and a budget in, a measured precision plan out.

The criterion is read by core's parser as it is typed (`core.planning.words.criterion_problem`:
also refuses an accuracy criterion without real data). Find plan runs core's search for the
experiment's config (the model and data Run measures) on the window's shared runner, with
progress here and Cancel beside it; the plan comes back as core's `PlanDocument` and is shown
as core words it: the outcome sentence, the sensitivity chart, every candidate in a table and
the snippet to paste. Verify applies the plan again in a fresh process. Apply makes the chosen
candidate the experiment's (core's `applied_config`), so the next Run measures it. All calls of
core's search and verify go through `backend` (a `PlanBackend`), which tests replace with fakes.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config_words import config_line
from autocast_explorer.core.planning.applying import applied_config
from autocast_explorer.core.planning.criterion import parse_criterion
from autocast_explorer.core.planning.words import (
    MEASURE_NAMES,
    candidate_cells,
    criterion_problem,
    outcome_sentence,
    search_summary,
)
from autocast_explorer.gui.charts.sensitivity_chart import SensitivityChart
from autocast_explorer.gui.features.plan import widgets
from autocast_explorer.gui.features.plan.worker import (
    PlanBackend,
    plan_task,
    verify_task,
)
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.labels import breakable, wrapping_label
from autocast_explorer.gui.shell.reflow import reflow_below
from autocast_explorer.gui.shell.tables import cell

if TYPE_CHECKING:
    from autocast_explorer.core.planning.document import PlanDocument
    from autocast_explorer.core.planning.verify import Verification
    from autocast_explorer.gui.shell.context import AppContext

#: Below this tab width (px at 100% text) the chart and the table stack.
SIDE_BY_SIDE_PX = 1000
#: Below this width the criterion, budget and buttons stack; and the buttons under the code.
INPUTS_ROW_PX = 620
ACTIONS_ROW_PX = 480
#: Candidates shown before the table scrolls; the snippet's fewest and most lines shown.
TABLE_ROWS = 12
SNIPPET_LINES = (3, 14)
#: A wrapping column of the table is never narrower than this text (then the table scrolls
#: sideways): the longest word of a candidate or a reason, at any text scale.
WRAPPING_MIN_TEXT = "reference "
#: Apply's key: the chosen candidate becomes the experiment's (while a plan is shown).
APPLY_KEY = "Ctrl+Alt+A"
CRITERION_COLUMN = widgets.CANDIDATE_COLUMNS.index("Criterion value")
SPEEDUP_COLUMN = widgets.CANDIDATE_COLUMNS.index("Speedup (95%)")


def _pair(text: str, field: QWidget) -> QWidget:
    """A label and its input on one line, the label a buddy (Alt+letter focuses the input)."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    caption = QLabel(text)
    caption.setBuddy(field)
    row.addWidget(caption)
    row.addWidget(field, 1)
    return box


def shown_cell(column: int, text: str) -> str:
    """A cell's text as the table shows it: a speedup's interval under its figure, and the
    candidate's layer paths free to wrap at their dots (the tooltip and `rows()` keep core's
    words)."""
    if column == SPEEDUP_COLUMN:
        return text.replace(" (", "\n(", 1)
    return breakable(text) if column == 0 else text


class PlanView(QWidget):
    """objectName `planView`: the Plan tab."""

    planStarted = Signal()
    #: The PlanDocument found, after it is shown.
    planFinished = Signal(object)
    planFailed = Signal(str)
    planCancelled = Signal()
    #: core's Verification (`passed`, `lines`), after it is shown.
    verifyFinished = Signal(object)
    verifyFailed = Signal(str)
    #: The plan shown changed (a new one, or cleared): file actions follow.
    shownChanged = Signal()
    #: Apply set the experiment's state: the ExperimentConfig the next Run measures.
    planApplied = Signal(object)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.setObjectName("planView")
        self._ctx = ctx
        self.backend = PlanBackend()
        self.client = ctx.tasks("plan")
        self.verify_client = ctx.tasks("planVerify")
        self.last_plan: PlanDocument | None = None
        self._build()
        self._connect()
        self._validate()

    # ---- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        """Top to bottom: what the tab does, the inputs, progress, the answer, the chart and
        the candidates, the code to paste and what Verify found."""
        intro = wrapping_label("planIntro", widgets.FIND_TIP, rich=True, color=style.MUTED)
        intro.setText(widgets.INTRO)
        inputs = self._build_inputs()
        self.progressBar = widgets.progress_bar()
        self.statusLabel = wrapping_label("planStatusLabel", "What the search is doing.")
        progress = QHBoxLayout()
        progress.addWidget(self.progressBar, 1)
        progress.addWidget(self.statusLabel, 2)
        self.outcomeLabel = widgets.outcome_label()
        self.summaryLabel = wrapping_label(
            "planSummaryLabel",
            "The config planned for and what the search spent.",
            color=style.MUTED,
        )
        self.chart = SensitivityChart()
        self.table = widgets.candidates_table()
        results = QHBoxLayout()
        results.addWidget(self.chart, 1)
        results.addWidget(self.table, 1, Qt.AlignmentFlag.AlignTop)
        reflow_below(results, SIDE_BY_SIDE_PX)
        self.snippetEdit = widgets.snippet_edit()
        actions = self._build_actions()
        self.verifyLabel = wrapping_label("planVerifyLabel", "What Verify found.", rich=True)
        for quiet in (self.progressBar, self.statusLabel, self.verifyLabel):
            quiet.hide()  # shown while they have something to say
        self._plan_parts: tuple[QWidget, ...] = (
            self.outcomeLabel,
            self.summaryLabel,
            self.table,
            self.snippetEdit,
            actions,
        )

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(intro)
        layout.addLayout(inputs)
        layout.addWidget(self.criterionError)
        layout.addLayout(progress)
        layout.addWidget(self.outcomeLabel)
        layout.addWidget(self.summaryLabel)
        layout.addLayout(results, 1)
        layout.addWidget(self.snippetEdit)
        layout.addWidget(actions)
        layout.addWidget(self.verifyLabel)

    def _build_inputs(self) -> QHBoxLayout:
        """The criterion, the budget and the buttons: one row, stacked in a narrow tab."""
        self.criterionEdit = widgets.criterion_edit()
        self.criterionError = widgets.error_label()
        self.budgetSpin = widgets.budget_spin()
        self.runButton = widgets.bold_button("Find plan", "planRunButton", widgets.FIND_TIP)
        self.cancelButton = widgets.button(
            "Cancel", "planCancelButton", "Stop the search within one candidate (Esc)."
        )
        inputs = QHBoxLayout()
        inputs.setContentsMargins(0, 0, 0, 0)
        inputs.addWidget(_pair("C&riterion", self.criterionEdit), 3)
        inputs.addWidget(_pair("&Budget", self.budgetSpin), 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.runButton)
        buttons.addWidget(self.cancelButton)
        inputs.addLayout(buttons)
        reflow_below(inputs, INPUTS_ROW_PX)
        return inputs

    def _build_actions(self) -> QWidget:
        """Apply, Copy code, Verify and Save as JSON, under the snippet."""
        self.applyButton = widgets.button(
            "Apply",
            "planApplyButton",
            "Make the chosen plan the experiment's: its dtype, layers kept in float32, threads "
            f"and route; the next Run measures it ({APPLY_KEY}).",
        )
        self.applyButton.setShortcut(QKeySequence(APPLY_KEY))
        self.copyButton = widgets.button(
            "Copy code", "planCopyButton", "Copy the plan's code to the clipboard."
        )
        self.verifyButton = widgets.button(
            "Verify",
            "planVerifyButton",
            "Rebuild the model in a fresh process, apply the plan, and check the criterion and "
            "the speedup again.",
        )
        self.saveButton = widgets.button(
            "Save as JSON…", "planSaveButton", "Write the plan (autocast-explorer/plan/1)."
        )
        actions = QWidget()  # hidden as a whole: no empty row takes spacing before a plan
        row = QHBoxLayout(actions)
        row.setContentsMargins(0, 0, 0, 0)
        for button in (self.applyButton, self.copyButton, self.verifyButton, self.saveButton):
            row.addWidget(button)
        row.addStretch(1)
        reflow_below(row, ACTIONS_ROW_PX)
        return actions

    def _connect(self) -> None:
        self.criterionEdit.textChanged.connect(self._validate)
        self.runButton.clicked.connect(self.start_plan)
        self.cancelButton.clicked.connect(self._ctx.cancel)
        self.applyButton.clicked.connect(self.apply_plan)
        self.copyButton.clicked.connect(self.copy_snippet)
        self.verifyButton.clicked.connect(self.start_verify)
        self.saveButton.clicked.connect(self.save_dialog)
        self.client.busyChanged.connect(self._update_actions)
        self.client.progress.connect(self._on_progress)
        self.client.finished.connect(self._on_finished)
        self.client.failed.connect(self._on_failed)
        self.client.cancelled.connect(self._on_cancelled)
        self.verify_client.finished.connect(self._on_verified)
        self.verify_client.failed.connect(self._on_verify_failed)
        self.verify_client.cancelled.connect(self._on_verify_cancelled)
        self._ctx.engineReady.connect(self._update_actions)
        self._ctx.configChanged.connect(self._validate)

    # ---- the criterion ---------------------------------------------------------------------
    def criterion_error(self) -> str:
        """What stops the search now ('' when it can start): the criterion, or the config."""
        config = self._ctx.valid_config()
        problem = criterion_problem(self.criterionEdit.text(), config)
        if not problem and config is None:
            problem = "Fix the settings on the left first."
        return problem

    @Slot()
    def _validate(self) -> None:
        problem = self.criterion_error()
        self.criterionError.setText(problem)
        self.criterionError.setVisible(bool(problem))
        self.criterionEdit.setStyleSheet(widgets.INVALID_BORDER if problem else "")
        self._show_summary()
        self._update_actions()

    @Slot()
    def _update_actions(self) -> None:
        ready, busy = self._ctx.engine_ready(), self.client.busy()
        self.runButton.setEnabled(ready and not busy and not self.criterion_error())
        self.cancelButton.setEnabled(self.client.is_running() or self.verify_client.is_running())
        has_plan = self.last_plan is not None
        self.copyButton.setEnabled(has_plan and bool(self.last_plan and self.last_plan.snippet))
        self.verifyButton.setEnabled(has_plan and ready and not busy)
        self.applyButton.setEnabled(has_plan and not busy)
        self.saveButton.setEnabled(has_plan)
        for part in self._plan_parts:  # no empty table, box and buttons before the first plan
            part.setVisible(has_plan)
        if not ready:
            tip = "Waiting for PyTorch to load…"
        elif busy:
            tip = "Something is being measured: wait or Cancel (Esc) first."
        elif self.criterion_error():
            tip = "Fix the criterion first."
        else:
            tip = widgets.FIND_TIP
        self.runButton.setToolTip(tip)

    # ---- the search ------------------------------------------------------------------------
    @Slot()
    def start_plan(self) -> bool:
        """Search for a plan for the experiment's config; False (nothing started) if it
        cannot run now (the run button's tooltip says why)."""
        self._validate()
        if not self.runButton.isEnabled():
            return False
        config = self._ctx.config()
        criterion = parse_criterion(self.criterionEdit.text())
        budget = float(self.budgetSpin.value())
        task = functools.partial(plan_task, self.backend, config, criterion, budget)
        if not self.client.start(task):
            return False
        self.progressBar.setValue(0)
        self.progressBar.show()
        self._set_status(f"Searching for {criterion} within {budget:g} s…")
        self._set_verify("")
        self._ctx.hide_banner()
        self._update_actions()
        self.planStarted.emit()
        return True

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        self.progressBar.setValue(round(fraction * widgets.PROGRESS_STEPS))
        self._set_status(message)

    @Slot(object)
    def _on_finished(self, plan: object) -> None:
        self.show_plan(plan)  # type: ignore[arg-type]
        self.progressBar.hide()
        self._set_status("")
        self.planFinished.emit(plan)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.progressBar.hide()
        self._set_status(f"Failed: {message}")
        self._update_actions()
        self.planFailed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self.progressBar.hide()
        self._set_status("Cancelled: no plan from a search stopped early.")
        self._update_actions()
        self.planCancelled.emit()

    def _set_verify(self, text: str, color: str = "") -> None:
        self.verifyLabel.setStyleSheet(f"color: {color};" if color else "")
        self.verifyLabel.setText(text)
        self.verifyLabel.setVisible(bool(text))

    def _set_status(self, text: str) -> None:
        self.statusLabel.setText(text)
        self.statusLabel.setVisible(bool(text))

    # ---- showing a plan --------------------------------------------------------------------
    def show_plan(self, plan: PlanDocument) -> None:
        """Show a plan (from a search, or made in tests): outcome, chart, table, snippet."""
        self.last_plan = plan
        self.outcomeLabel.setText(outcome_sentence(plan))
        self.outcomeLabel.setStyleSheet(
            f"color: {style.OK if plan.outcome == 'plan' else style.TEXT};"
        )
        self.chart.show_plan(plan)
        self._fill_table(plan)
        self.snippetEdit.setPlainText(plan.snippet)
        self._set_verify("")
        self._show_summary()
        self._update_actions()
        self.shownChanged.emit()

    def _fill_table(self, plan: PlanDocument) -> None:
        criterion = parse_criterion(plan.criterion)
        header = MEASURE_NAMES[criterion.measure][0]
        self.table.setHorizontalHeaderItem(CRITERION_COLUMN, QTableWidgetItem(header))
        self.table.setRowCount(len(plan.candidates))
        for i, candidate in enumerate(plan.candidates):
            chosen = candidate.model_dump(exclude={"met", "why_not"}) == plan.chosen.model_dump()
            for j, text in enumerate(candidate_cells(candidate, criterion)):
                item = QTableWidgetItem(shown_cell(j, text))
                item.setToolTip(text)
                if chosen:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(i, j, item)
        self._fit()

    def _fit(self) -> None:
        """The table as tall as its rows (up to TABLE_ROWS, then it scrolls) and the snippet as
        tall as its lines: the page scrolls, not a box a few lines high."""
        table = self.table
        header = table.horizontalHeader()
        fixed = sum(
            header.sectionSize(c)
            for c in range(header.count())
            if c not in widgets.WRAPPING_COLUMNS
        )
        left = max(table.viewport().width() - fixed, 0)
        narrowest = table.fontMetrics().horizontalAdvance(WRAPPING_MIN_TEXT)
        for column, share in widgets.WRAPPING_COLUMNS.items():
            header.resizeSection(column, max(round(left * share), narrowest))
        table.resizeRowsToContents()
        rows = sum(table.rowHeight(i) for i in range(min(table.rowCount(), TABLE_ROWS)))
        bar = table.horizontalScrollBar()
        extra = bar.sizeHint().height() if bar.isVisible() else 0
        table.setFixedHeight(
            table.horizontalHeader().height() + rows + 2 * table.frameWidth() + extra + 2
        )
        lines = min(max(self.snippetEdit.blockCount(), SNIPPET_LINES[0]), SNIPPET_LINES[1])
        metrics = self.snippetEdit.fontMetrics()
        margins = self.snippetEdit.contentsMargins()
        self.snippetEdit.setFixedHeight(
            lines * metrics.lineSpacing()
            + 2 * round(self.snippetEdit.document().documentMargin())
            + margins.top()
            + margins.bottom()
            + self.snippetEdit.horizontalScrollBar().sizeHint().height()
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()  # rows wrap anew at another width

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit()

    def _show_summary(self) -> None:
        plan = self.last_plan
        if plan is None:
            self.summaryLabel.setText("")
            return
        text = f"{search_summary(plan)} Planned for {config_line(plan.config)}."
        now = self._ctx.valid_config()
        if now == applied_config(plan) and now != plan.config:
            text += " Applied: the next Run measures the chosen plan."
        elif now != plan.config:
            text += " The settings on the left have changed since: Find plan again for them."
        self.summaryLabel.setText(text)

    def clear(self) -> None:
        self.last_plan = None
        self.outcomeLabel.setText("")
        self.summaryLabel.setText("")
        self.chart.clear()
        self.table.setRowCount(0)
        self.snippetEdit.setPlainText("")
        self._set_verify("")
        self._update_actions()
        self.shownChanged.emit()

    # ---- apply, copy, verify, save ---------------------------------------------------------
    @Slot()
    def apply_plan(self) -> bool:
        """Set the experiment's state to the plan's chosen candidate (`applied_config`: the
        config planned for, with its dtype, keep-set, threads and route); False when no plan is
        shown or something is being measured."""
        plan = self.last_plan
        if plan is None or self.client.busy():
            return False
        config = applied_config(plan)
        self._ctx.set_config(config)
        self._ctx.show_message("The plan is the experiment's now: Run measures it.")
        self.planApplied.emit(config)
        return True

    @Slot()
    def copy_snippet(self) -> bool:
        """Put the plan's code on the clipboard; False when there is none."""
        if self.last_plan is None or not self.last_plan.snippet:
            return False
        QApplication.clipboard().setText(self.last_plan.snippet)
        self._ctx.show_message("The plan's code is on the clipboard.")
        return True

    @Slot()
    def start_verify(self) -> bool:
        """Apply the plan shown again in a fresh process; False if nothing started."""
        plan = self.last_plan
        if plan is None or not self._ctx.engine_ready() or self.client.busy():
            return False
        if not self.verify_client.start(functools.partial(verify_task, self.backend, plan)):
            return False
        self._set_verify("Verifying in a fresh process…")
        self._update_actions()
        return True

    @Slot(object)
    def _on_verified(self, verification: object) -> None:
        self.show_verification(verification)  # type: ignore[arg-type]
        self.verifyFinished.emit(verification)

    def show_verification(self, verification: Verification) -> None:
        mark = (
            "✓ The plan held in a fresh process." if verification.passed else "✗ It did not hold."
        )
        lines = "".join(f"<br>• {html.escape(line)}" for line in verification.lines)
        self._set_verify(f"<b>{mark}</b>{lines}", style.OK if verification.passed else style.BAD)
        self._update_actions()

    @Slot(str)
    def _on_verify_failed(self, message: str) -> None:
        self._set_verify(f"Verify failed: {html.escape(message)}", style.BAD)
        self._update_actions()
        self.verifyFailed.emit(message)

    @Slot()
    def _on_verify_cancelled(self) -> None:
        self._set_verify("Verify cancelled.")
        self._update_actions()

    def save_plan(self, path: str | Path) -> bool:
        """Write the plan shown as JSON to `path`; False when there is none or writing failed."""
        plan = self.last_plan
        return plan is not None and self._ctx.write_file(path, plan.to_json(), "the plan")

    @Slot()
    def save_dialog(self) -> None:
        start = str(Path.cwd() / "autocast-plan.json")
        path, _ = QFileDialog.getSaveFileName(
            self._ctx.host(), "Save plan as JSON", start, "JSON (*.json)"
        )
        if path:
            self.save_plan(path)

    # ---- reading back ----------------------------------------------------------------------
    def rows(self) -> list[tuple[str, ...]]:
        """The candidates table's cells in core's words (each cell's tooltip), row by row."""
        return [
            tuple(cell(self.table, i, j).toolTip() for j in range(self.table.columnCount()))
            for i in range(self.table.rowCount())
        ]

    def chosen_row(self) -> int | None:
        """The table row of the chosen candidate (drawn bold), None when none is listed."""
        for i in range(self.table.rowCount()):
            item = self.table.item(i, 0)
            if item is not None and item.font().bold():
                return i
        return None
