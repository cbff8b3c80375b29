"""The "Ops" tab: a live op-policy probe of CPU autocast on the installed torch.

Probe runs core.oppolicy.probe_ops on the window's shared TaskRunner (progress in the window's
bar, Cancel/Esc stops it between ops) and shows, for each op, the policy derived from the
dtypes it really returned, what PyTorch documents for it (the AMP docs' CPU lists and torch's
own test lists) and the output dtype of every input case. With 150 ops the table is grouped by
category (header rows), filtered by a search box, counted per policy, and can put the ops that
disagree with their documentation first. The notes say why each disagreement happens, then
where common belief (CUDA's float32 list, the tutorial) is wrong on this CPU. Nothing here is
hard-coded: an empty table until the probe has run.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.gui.features.ops.notes import idle_html, notes_html
from autocast_explorer.gui.features.ops.policies import (
    POLICY_MEANINGS,
    counts_html,
    legend_html,
    legend_tip,
)
from autocast_explorer.gui.features.ops.table import (
    CASE_COLUMNS,
    DISAGREE_MARK,
    DOCUMENTED_COL,
    FIRST_CASE_COL,
    OP_COL,
    OP_COLUMN_WIDTH,
    POLICY_COL,
    ROW_KIND_ROLE,
    fill_op_column,
    fill_rows,
    op_name,
    op_rows,
    policy_table,
)
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import ReflowRow
from autocast_explorer.gui.shell.tables import cell

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.oppolicy import OpPolicy, ProbeResult
    from autocast_explorer.gui.shell.context import AppContext
    from autocast_explorer.gui.tasks.runner import TaskState

#: Names the tests import from here.
__all__ = ["OP_COL", "OP_COLUMN_WIDTH", "POLICY_MEANINGS", "OpsPanel", "probe_task"]


def probe_task(dtype: str, state: TaskState):
    """On the worker thread: the probe, with progress and cooperative cancel between ops."""
    from autocast_explorer.core.numerics.oppolicy import probe_ops

    return probe_ops(dtype, progress=state.set_progress, cancel=state.is_interruption_requested)


class OpsPanel(QWidget):
    """The Ops tab; objectName `opsPanel`. Runs on its own task client, follows the dtype."""

    probeStarted = Signal()
    #: The probe finished; carries core's ProbeResult.
    probeFinished = Signal(object)
    probeFailed = Signal(str)
    probeCancelled = Signal()

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("opsPanel")
        self._ctx = ctx
        self.client = ctx.tasks("ops")
        self._config_dtype = ""
        self.last_probe: ProbeResult | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self._build_bar())
        self.statusLabel = QLabel("")
        self.statusLabel.setObjectName("probeStatus")
        self.statusLabel.setWordWrap(True)
        self.statusLabel.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.statusLabel)
        self.legend = QLabel("")
        self.legend.setObjectName("policyLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setToolTip(legend_tip())
        layout.addWidget(self.legend)
        layout.addLayout(self._build_tools())
        layout.addWidget(self._build_splitter(), 1)

        self.client.busyChanged.connect(self._update_actions)
        self.client.finished.connect(self._on_finished)
        self.client.failed.connect(self._on_failed)
        self.client.cancelled.connect(self._on_cancelled)
        ctx.engineReady.connect(self._update_actions)
        ctx.configChanged.connect(self._follow_config_dtype)
        self._follow_config_dtype()
        self._show_legend(self.probeDtypeCombo.currentText())
        self.notesView.setHtml(idle_html())
        self.statusLabel.setText("")
        self._update_actions()

    # ---- construction ---------------------------------------------------------------------
    def _build_bar(self) -> ReflowRow:
        """Probe and Save, then the dtype to probe: side by side when there is room, else
        one above the other (the status gets its own line so it never squeezes them)."""
        self.probeButton = QPushButton("Probe ops  (F9)")
        self.probeButton.setObjectName("probeButton")
        self.probeButton.setMinimumHeight(30)
        self.probeButton.clicked.connect(self._on_probe_clicked)
        self.probeDtypeCombo = QComboBox()
        self.probeDtypeCombo.setObjectName("probeDtypeCombo")
        self.probeDtypeCombo.addItems(list(DTYPES))
        self.probeDtypeCombo.setToolTip(
            "The autocast dtype to probe. Follows the Dtype control on the left; pick another "
            "here to probe it without changing the experiment."
        )
        self.saveProbeButton = QPushButton("Save probe JSON…")
        self.saveProbeButton.setObjectName("saveProbeButton")
        self.saveProbeButton.setToolTip(
            "Write the probe as JSON (schema autocast-explorer/ops/1, the same document as "
            "`autocast-explorer ops --json`)."
        )
        self.saveProbeButton.clicked.connect(self.save_dialog)
        dtype_label = QLabel("autocast &dtype:")
        dtype_label.setBuddy(self.probeDtypeCombo)
        dtype_label.setToolTip(self.probeDtypeCombo.toolTip())
        buttons, choice = QWidget(), QWidget()
        buttons_row, choice_row = QHBoxLayout(buttons), QHBoxLayout(choice)
        for row in (buttons_row, choice_row):
            row.setContentsMargins(0, 0, 0, 0)
        buttons_row.addWidget(self.probeButton)
        buttons_row.addWidget(self.saveProbeButton)
        buttons_row.addStretch(1)
        choice_row.addWidget(dtype_label)
        choice_row.addWidget(self.probeDtypeCombo)
        choice_row.addStretch(1)
        return ReflowRow([(buttons, 0), (choice, 1)], 280)

    def _build_tools(self) -> QHBoxLayout:
        """The filter (Ctrl+F inside this tab), Disagreements first, and the policy counts."""
        self.filterEdit = QLineEdit()
        self.filterEdit.setObjectName("opsFilter")
        self.filterEdit.setClearButtonEnabled(True)
        self.filterEdit.setPlaceholderText("Filter ops… (Ctrl+F)")
        self.filterEdit.setToolTip(
            "Show only ops whose name, category, measured or documented policy contains every "
            "word typed; 'disagree' (or '!') keeps the ops that contradict their documentation."
        )
        for clear in self.filterEdit.findChildren(QToolButton):  # the clear button
            clear.setToolTip("Clear the filter: show every op.")
        self.filterEdit.textChanged.connect(self._refill)
        find = QShortcut(QKeySequence.StandardKey.Find, self, self._focus_filter)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)  # only inside this tab
        self.disagreementsFirstCheck = QCheckBox("&Disagreements first")
        self.disagreementsFirstCheck.setObjectName("disagreementsFirst")
        self.disagreementsFirstCheck.setToolTip(
            "Put the ops whose measured policy contradicts what PyTorch documents at the top, "
            "in their own group."
        )
        self.disagreementsFirstCheck.toggled.connect(self._refill)
        self.countsLabel = QLabel("")
        self.countsLabel.setObjectName("policyCounts")
        self.countsLabel.setTextFormat(Qt.TextFormat.RichText)
        self.countsLabel.setToolTip("Ops per measured policy (shown / probed while filtering).")
        tools = QHBoxLayout()
        tools.addWidget(self.filterEdit, 2)
        tools.addWidget(self.disagreementsFirstCheck)
        tools.addWidget(self.countsLabel, 3)
        return tools

    def _build_splitter(self) -> QSplitter:
        """The policy table with the notes beside it (under it in a narrow tab)."""
        self.policyTable = policy_table()
        self.policyTable.viewport().installEventFilter(self)  # resized: the op column fills
        self.notesView = QTextBrowser()
        self.notesView.setObjectName("probeNotes")
        self.notesView.setOpenLinks(False)
        self.notesView.setToolTip(
            "Why each op disagrees with PyTorch's documentation, then common beliefs about "
            "autocast (the CUDA float32 list, the tutorial's softmax/mean claim) next to what "
            "this probe measured."
        )
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("opsSplitter")
        splitter.addWidget(self.policyTable)
        splitter.addWidget(self.notesView)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([680, 250])
        self.splitter = splitter
        return splitter

    # ---- state ----------------------------------------------------------------------------
    #: Below this width the notes go under the table (beside it they squeeze it to "…").
    SIDE_BY_SIDE_WIDTH = 760

    def resizeEvent(self, event: QResizeEvent) -> None:
        vertical = event.size().width() < self.SIDE_BY_SIDE_WIDTH
        wanted = Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal
        if self.splitter.orientation() != wanted:
            self.splitter.setOrientation(wanted)
            total = self.splitter.height() if vertical else self.splitter.width()
            self.splitter.setSizes([total * 3 // 4, total - total * 3 // 4])
        super().resizeEvent(event)

    @Slot()
    def _update_actions(self) -> None:
        busy = self.client.busy()
        ready = self._ctx.engine_ready()
        self.probeButton.setEnabled(ready and not busy)
        self.saveProbeButton.setEnabled(self.last_probe is not None)
        if not ready:
            tip = "Waiting for PyTorch to load…"
        elif busy:
            tip = "A run or probe is in progress: Cancel (Esc) first."
        else:
            tip = "Probe every op under autocast with the dtype beside this button."
        self.probeButton.setToolTip(tip)

    @Slot()
    def _follow_config_dtype(self) -> None:
        """Follow the Dtype control when it changes (a dtype picked here stays otherwise)."""
        dtype = self._ctx.dtype()
        if dtype == self._config_dtype:
            return
        self._config_dtype = dtype
        if dtype in DTYPES:
            self.probeDtypeCombo.setCurrentText(dtype)

    # ---- probing --------------------------------------------------------------------------
    @Slot()
    def _on_probe_clicked(self) -> None:
        self.start_probe()

    def start_probe(self, dtype: str | None = None) -> bool:
        """Probe on the shared runner; False (nothing started) if it is busy or not ready."""
        if not self._ctx.engine_ready() or self.client.busy():
            return False
        dtype = dtype or self.probeDtypeCombo.currentText()
        if not self.client.start(functools.partial(probe_task, dtype)):
            return False
        self.statusLabel.setText(f"Probing {dtype}… (Cancel or Esc stops between ops)")
        self._update_actions()
        self.probeStarted.emit()
        return True

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        self.show_probe(result)  # type: ignore[arg-type]
        self.probeFinished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.statusLabel.setText(
            f"<span style='color:{style.BAD}'><b>Probe failed:</b> {message}</span>"
        )
        self.probeFailed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        kept = " (the table shows the previous probe)" if self.last_probe else ""
        self.statusLabel.setText(f"Probe cancelled{kept}.")
        self.probeCancelled.emit()

    # ---- drawing --------------------------------------------------------------------------
    @Slot()
    def _focus_filter(self) -> None:
        self.filterEdit.setFocus()
        self.filterEdit.selectAll()

    def show_probe(self, probe: ProbeResult) -> None:
        """Fill the table, legend, counts and notes from a probe result (a run or a file)."""
        self.last_probe = probe
        self._show_legend(probe.dtype)
        self._refill()
        self._show_notes(probe)
        env = probe.environment
        self.statusLabel.setText(
            f"<b>{len(probe.ops)} ops</b> probed with {probe.dtype} on torch "
            f"{env.torch_version}, {env.cpu_model}; "
            f"<b>{len(probe.disagreements())}</b> disagree with PyTorch's documentation."
        )
        self._update_actions()

    @Slot()
    def _refill(self) -> None:
        """Rebuild the rows for the current filter and ordering (cheap: ~150 rows)."""
        from autocast_explorer.core.numerics.oppolicy import grouped_ops

        probe = self.last_probe
        table = self.policyTable
        if probe is None:
            table.setRowCount(0)
            self.countsLabel.setText("")
            return
        groups = grouped_ops(
            probe.ops, self.filterEdit.text(), self.disagreementsFirstCheck.isChecked()
        )
        fill_rows(table, groups, probe.dtype)
        self._show_counts(probe, [op for _group, ops in groups for op in ops])
        self._fill_op_column()

    def _fill_op_column(self) -> None:
        fill_op_column(self.policyTable)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.policyTable.viewport():
            self._fill_op_column()
        return super().eventFilter(watched, event)

    def _show_counts(self, probe: ProbeResult, shown: list[OpPolicy]) -> None:
        self.countsLabel.setText(counts_html(probe, shown))

    def _show_legend(self, low: str) -> None:
        self.legend.setText(legend_html(low))

    def _show_notes(self, probe: ProbeResult) -> None:
        self.notesView.setHtml(notes_html(probe))

    # ---- saving ---------------------------------------------------------------------------
    @Slot()
    def save_dialog(self) -> None:
        if self.last_probe is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save probe as JSON", str(Path.cwd() / "autocast-ops.json"), "JSON (*.json)"
        )
        if path:
            self.save_probe(path)

    def save_probe(self, path: str | Path) -> bool:
        """Write the last probe as JSON atomically; False (message shown) when it fails."""
        from autocast_explorer.core.documents.files import write_atomic

        if self.last_probe is None:
            return False
        try:
            write_atomic(path, self.last_probe.to_json())
        except OSError as exc:
            self.statusLabel.setText(
                f"<span style='color:{style.BAD}'>Could not save the probe to {path}: "
                f"{exc.strerror or exc}</span>"
            )
            return False
        self.statusLabel.setText(f"Saved the probe to {path}.")
        return True

    # ---- read-back for tests -------------------------------------------------------------
    def _op_rows(self) -> list[int]:
        return op_rows(self.policyTable)

    def _op_name(self, row: int) -> str:
        return op_name(self.policyTable, row)

    def policies(self) -> dict[str, str]:
        """op name → policy, as held by the table's visible op rows."""
        t = self.policyTable
        return {self._op_name(r): cell(t, r, POLICY_COL).text() for r in self._op_rows()}

    def documented_policies(self) -> dict[str, str]:
        """op name → the documented column's text."""
        t = self.policyTable
        return {self._op_name(r): cell(t, r, DOCUMENTED_COL).text() for r in self._op_rows()}

    def policy_colors(self) -> dict[str, str]:
        t = self.policyTable
        return {
            self._op_name(r): cell(t, r, POLICY_COL).background().color().name()
            for r in self._op_rows()
        }

    def case_outputs(self, op: str) -> dict[str, str]:
        """The output-dtype cells of one op's row, by case name."""
        t = self.policyTable
        for r in self._op_rows():
            if self._op_name(r) == op:
                return {
                    case: cell(t, r, c).text()
                    for c, (case, _title) in enumerate(CASE_COLUMNS, start=FIRST_CASE_COL)
                }
        raise KeyError(op)

    def flagged_ops(self) -> list[str]:
        """Ops marked ⚠ (measured policy contradicts the documented one) in the table."""
        t = self.policyTable
        return [
            self._op_name(r)
            for r in self._op_rows()
            if cell(t, r, OP_COL).text().startswith(DISAGREE_MARK)
        ]

    def row_layout(self) -> list[tuple[str, str]]:
        """Every table row top to bottom: ("group", title) or ("op", name)."""
        t = self.policyTable
        rows = []
        for r in range(t.rowCount()):
            item = cell(t, r, OP_COL)
            kind = str(item.data(ROW_KIND_ROLE))
            rows.append((kind, item.text() if kind == "group" else self._op_name(r)))
        return rows
