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
from PySide6.QtGui import QColor, QFont, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.numerics.opcategories import CATEGORIES
from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import ReflowRow
from autocast_explorer.gui.shell.tables import cell, column_header

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.oppolicy import Note, OpPolicy, ProbeResult
    from autocast_explorer.gui.shell.context import AppContext
    from autocast_explorer.gui.tasks.runner import TaskState

#: The classes core.oppolicy derives, in legend order, with one sentence each.
POLICY_MEANINGS: dict[str, str] = {
    "lower": "float32 inputs come out in the autocast dtype: autocast casts them down and the "
    "op runs in low precision.",
    "fp32": "low-precision inputs come out in float32: autocast casts them up, the op runs in "
    "float32.",
    "follows": "no autocast rule: the output keeps the input's dtype (float32 in → float32, "
    "low in → low).",
    "promote": "no autocast rule: equal dtypes are kept, but mixed float32/low inputs give "
    "float32, the wider (type promotion).",
    "error": "the op raised an error for one of the input cases (hover for the message).",
    "other": "none of the above: the observed dtypes are in the row's tooltip.",
}
#: The documented column's values, in words (tooltips).
DOCUMENTED_MEANINGS: dict[str, str] = {
    "lower": "on PyTorch's CPU list of ops that autocast to the low-precision dtype",
    "fp32": "on PyTorch's CPU list of ops that autocast to float32",
    "promote": "documented to run in the widest input type",
    "unlisted": "on no CPU list: the docs say it runs in the type defined by its inputs",
}
#: Short legend words beside each policy chip (the full meaning is the chip's tooltip).
POLICY_SHORT: dict[str, str] = {
    "lower": "cast down",
    "fp32": "cast up",
    "follows": "input's dtype",
    "promote": "widest input",
    "error": "raised",
    "other": "none of these",
}
POLICY_COLORS: dict[str, str] = {
    "fp32": style.dtype_color("float32"),
    "follows": "#7f8c8d",
    "promote": "#7b4fa0",
    "error": style.BAD,
    "other": style.WARN,
}
CASE_COLUMNS = (
    ("float32", "fp32\nin →"),
    ("low", "low\nin →"),
    ("low_first", "low 1st\n+fp32 →"),
    ("float32_first", "fp32 1st\n+low →"),
)
#: Complex results are shown short so a cell fits ("complex64[float32]" → "c64[float32]").
COMPLEX_SHORT = {"complex32": "c32", "complex64": "c64", "complex128": "c128"}
CASE_TIPS = {
    "float32": "Output dtype with every floating input in float32.",
    "low": "Output dtype with every floating input in the autocast dtype.",
    "low_first": "Output dtype with the first input in the autocast dtype, the rest float32.",
    "float32_first": "Output dtype with the first input float32, the rest in the autocast dtype.",
}
OP_COLUMN_WIDTH = 205
ROW_HEIGHT = 22
#: Columns before the case columns.
OP_COL, POLICY_COL, DOCUMENTED_COL = 0, 1, 2
FIRST_CASE_COL = 3
COLUMNS = ("op", "policy", "documented", *(title for _case, title in CASE_COLUMNS))
NOTE_BACKGROUND = "#fff3cd"
NOTE_BORDER = "#e0a800"
GROUP_BACKGROUND = "#e8eaed"
DISAGREE_MARK = "⚠ "
#: Item data role holding the kind of row: "op" or "group".
ROW_KIND_ROLE = Qt.ItemDataRole.UserRole + 1
GROUP_TITLES: dict[str, str] = {"disagreements": "⚠ disagree with PyTorch's documentation"}
IDLE = (
    "Press <b>Probe</b> (F9) to run every op on PyTorch's CPU autocast lists (and common "
    "unlisted ones) under torch.autocast('cpu') with float32, low-precision and mixed inputs, "
    "classify each from the dtypes it returns, and set it beside what PyTorch documents."
)


def policy_color(policy: str, dtype: str) -> str:
    """'lower' wears the autocast dtype's color, 'fp32' float32's, as everywhere else."""
    if policy == "lower":
        return style.dtype_color(dtype)
    return POLICY_COLORS.get(policy, style.UNKNOWN_DTYPE_COLOR)


def probe_task(dtype: str, state: TaskState):
    """On the worker thread: the probe, with progress and cooperative cancel between ops."""
    from autocast_explorer.core.numerics.oppolicy import probe_ops

    return probe_ops(dtype, progress=state.set_progress, cancel=state.is_interruption_requested)


def _tinted(color: str, alpha: int = 80) -> QColor:
    tint = QColor(color)
    tint.setAlpha(alpha)
    return tint


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
        self.statusLabel = QLabel("")
        self.statusLabel.setObjectName("probeStatus")
        self.statusLabel.setWordWrap(True)
        self.statusLabel.setTextFormat(Qt.TextFormat.RichText)
        dtype_label = QLabel("autocast &dtype:")
        dtype_label.setBuddy(self.probeDtypeCombo)
        dtype_label.setToolTip(self.probeDtypeCombo.toolTip())
        # Two groups that sit side by side when there is room, else one above the other; the
        # status gets its own line so it wraps instead of squeezing the buttons.
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
        bar = ReflowRow([(buttons, 0), (choice, 1)], 280)

        self.legend = QLabel("")
        self.legend.setObjectName("policyLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setToolTip(
            "<br>".join(f"<b>{p}</b>: {m}" for p, m in POLICY_MEANINGS.items())
            + "<br><br>Policies are derived from the observed output dtypes, never looked up."
        )

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

        self.policyTable = QTableWidget(0, len(COLUMNS))
        self.policyTable.setObjectName("opsPolicyTable")
        self.policyTable.setHorizontalHeaderLabels(COLUMNS)
        self.policyTable.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.policyTable.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.policyTable.verticalHeader().setVisible(False)
        self.policyTable.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.policyTable.setToolTip(
            "Each op under torch.autocast('cpu'), grouped by category: its measured policy, "
            "what PyTorch documents, and the output dtype for each input case (— : the op "
            "takes one floating input; bool[float32]: the dtype it computed in). ⚠ marks an "
            "op whose measurement contradicts its documentation; hover a row for why."
        )
        # Every column as wide as its header and cells (a narrow tab scrolls sideways instead
        # of eliding every case to "…"); the op column keeps a fixed, draggable width.
        header = self.policyTable.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(OP_COL, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(OP_COL, OP_COLUMN_WIDTH)
        header.setStretchLastSection(False)
        self.policyTable.viewport().installEventFilter(self)  # resized: the op column fills
        self.policyTable.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        column_header(self.policyTable, DOCUMENTED_COL).setToolTip(
            "What PyTorch documents for the op: the AMP docs' CPU lists and torch's own "
            "AutocastCPUTestLists (read from the installed wheel). 'unlisted': on no list."
        )
        for c, (case, _title) in enumerate(CASE_COLUMNS, start=FIRST_CASE_COL):
            column_header(self.policyTable, c).setToolTip(CASE_TIPS[case])

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

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(bar)
        layout.addWidget(self.statusLabel)
        layout.addWidget(self.legend)
        layout.addLayout(tools)
        layout.addWidget(splitter, 1)

        self.client.busyChanged.connect(self._update_actions)
        self.client.finished.connect(self._on_finished)
        self.client.failed.connect(self._on_failed)
        self.client.cancelled.connect(self._on_cancelled)
        ctx.engineReady.connect(self._update_actions)
        ctx.configChanged.connect(self._follow_config_dtype)
        self._follow_config_dtype()
        self._show_legend(self.probeDtypeCombo.currentText())
        self.notesView.setHtml(f"<p style='color:{style.MUTED}'>{IDLE}</p>")
        self.statusLabel.setText("")
        self._update_actions()

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
        table.clearSpans()
        table.setRowCount(sum(1 + len(ops) for _group, ops in groups))
        row = 0
        for group, ops in groups:
            self._group_row(row, group, ops)
            row += 1
            for op in ops:
                self._op_row(row, op, probe.dtype)
                row += 1
        self._show_counts(probe, [op for _group, ops in groups for op in ops])
        self._fill_op_column()

    def _fill_op_column(self) -> None:
        """The op column takes the table's spare width, never less than OP_COLUMN_WIDTH: a wide
        window left an empty band right of the last column."""
        table = self.policyTable
        header = table.horizontalHeader()
        others = sum(header.sectionSize(c) for c in range(table.columnCount()) if c != OP_COL)
        header.resizeSection(OP_COL, max(OP_COLUMN_WIDTH, table.viewport().width() - others))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.policyTable.viewport():
            self._fill_op_column()
        return super().eventFilter(watched, event)

    def _group_row(self, row: int, group: str, ops: list[OpPolicy]) -> None:
        table = self.policyTable
        title = GROUP_TITLES.get(group) or CATEGORIES.get(group, group or "uncategorized")
        disagree = sum(op.disagrees for op in ops)
        extra = f", {disagree} ⚠" if disagree and group != "disagreements" else ""
        item = QTableWidgetItem(f"{title} ({len(ops)}{extra})")
        item.setData(ROW_KIND_ROLE, "group")
        item.setData(Qt.ItemDataRole.UserRole, group)
        item.setBackground(QColor(GROUP_BACKGROUND))
        font = QFont(table.font())
        font.setBold(True)
        item.setFont(font)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled)
        table.setItem(row, 0, item)
        for c in range(1, table.columnCount()):
            filler = QTableWidgetItem("")
            filler.setData(ROW_KIND_ROLE, "group")
            filler.setFlags(Qt.ItemFlag.ItemIsEnabled)
            table.setItem(row, c, filler)
        table.setSpan(row, 0, 1, table.columnCount())

    def _op_row(self, row: int, op: OpPolicy, low: str) -> None:
        table = self.policyTable
        bold = QFont(table.font())
        bold.setBold(True)
        name = QTableWidgetItem((DISAGREE_MARK if op.disagrees else "") + op.name)
        if op.disagrees:
            name.setBackground(QColor(NOTE_BACKGROUND))
            name.setFont(bold)
        policy = QTableWidgetItem(op.policy)
        policy.setBackground(QColor(policy_color(op.policy, low)))
        policy.setForeground(QColor("white"))
        policy.setFont(bold)
        policy.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        doc = op.documented
        documented = QTableWidgetItem(doc.policy if doc else "?")
        documented.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        if doc is None:
            documented.setToolTip("This probe file was written before documented policies.")
        else:
            lists = "; ".join(doc.lists) or "on no list"
            documented.setToolTip(
                f"{doc.name}: {DOCUMENTED_MEANINGS.get(doc.policy, doc.policy)} ({lists})"
            )
            if op.disagrees:
                documented.setForeground(QColor(style.BAD))
                documented.setFont(bold)
        tip = f"{op.name}: {op.policy}: {op.why}"
        if op.disagrees and doc is not None:
            tip += f"\n⚠ documented {doc.policy} ({doc.name}); see the notes for why."
        for item in (name, policy, documented):
            item.setData(ROW_KIND_ROLE, "op")
            item.setData(Qt.ItemDataRole.UserRole, op.name)
        for item in (name, policy):
            item.setToolTip(tip)
        table.setItem(row, OP_COL, name)
        table.setItem(row, POLICY_COL, policy)
        table.setItem(row, DOCUMENTED_COL, documented)
        for c, (case, _title) in enumerate(CASE_COLUMNS, start=FIRST_CASE_COL):
            item = self._case_item(op, case)
            item.setData(ROW_KIND_ROLE, "op")
            table.setItem(row, c, item)

    def _case_item(self, op: OpPolicy, case: str) -> QTableWidgetItem:
        c = op.case(case)
        if c is None:
            item = QTableWidgetItem("—")
            item.setToolTip("This op takes a single floating input: no mixed case.")
            item.setForeground(QColor(style.MUTED))
        elif c.error is not None:
            item = QTableWidgetItem("error")
            item.setForeground(QColor(style.BAD))
            item.setToolTip(f"inputs {', '.join(c.in_dtypes)}: {c.error}")
        else:
            text = c.cell_text()
            for long, short in COMPLEX_SHORT.items():
                text = text.replace(long, short)
            item = QTableWidgetItem(text)
            item.setBackground(_tinted(style.dtype_color(c.effective or "?")))
            computed = f", computed in {c.computed}" if c.computed else ""
            kernels = f"; dispatched {', '.join(c.kernels)}" if c.kernels else ""
            item.setToolTip(
                f"inputs {', '.join(c.in_dtypes)} → output {c.out_dtype}{computed}; "
                f"{c.casts} cast(s){kernels}"
            )
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        return item

    def _show_counts(self, probe: ProbeResult, shown: list[OpPolicy]) -> None:
        from collections import Counter

        counts = Counter(op.policy for op in shown)
        chips = []
        for policy, total in probe.policy_counts().items():
            color = policy_color(policy, probe.dtype)
            n = counts.get(policy, 0)
            text = f"{n}/{total}" if len(shown) != len(probe.ops) else f"{total}"
            chips.append(f"<span style='color:{color}'><b>{text}</b> {policy}</span>")
        disagree = sum(op.disagrees for op in shown)
        head = (
            f"<b>{len(shown)} of {len(probe.ops)}</b> shown"
            if len(shown) != len(probe.ops)
            else f"<b>{len(probe.ops)}</b> ops"
        )
        self.countsLabel.setText(
            f"{head}: " + " · ".join(chips) + f" · <b>{disagree}</b> ⚠ disagree"
        )

    def _show_legend(self, low: str) -> None:
        parts = []
        for policy, short in POLICY_SHORT.items():
            color = policy_color(policy, low)
            parts.append(
                f"<span style='background:{color}; color:white'>&nbsp;<b>{policy}</b>&nbsp;"
                f"</span>&nbsp;{short}"
            )
        self.legend.setText(
            "&nbsp;&nbsp; ".join(parts)
            + f"&nbsp;&nbsp; <span style='color:{style.MUTED}'>(hover for meanings; "
            "documented = what PyTorch publishes)</span>"
        )

    def _show_notes(self, probe: ProbeResult) -> None:
        """Disagreements with the documentation first (each with its reason), then common
        beliefs contradicted here, one box per source; where the documentation came from."""
        from autocast_explorer.core.numerics.oppolicy import DOCUMENTED_PREFIX

        documented = [n for n in probe.notes if n.source.startswith(DOCUMENTED_PREFIX)]
        beliefs = [n for n in probe.notes if not n.source.startswith(DOCUMENTED_PREFIX)]
        html = [
            f"<h3 style='margin:0'>Disagreements with PyTorch's documentation "
            f"({len(documented)})</h3>"
        ]
        for n in documented:
            html.append(
                f"<table width='100%' cellpadding='4' style='background:{NOTE_BACKGROUND};"
                f"border:1px solid {NOTE_BORDER}; margin-top:4px'><tr><td>"
                f"<b>{n.op}</b> — documented: <i>{n.claim}</i>.<br>{n.verdict}"
                "</td></tr></table>"
            )
        if not documented:
            html.append("<p>None: every probed op does what PyTorch documents.</p>")
        if probe.sources:
            origin = "<br>".join(f"<b>{k}</b>: {v}" for k, v in probe.sources.items())
            html.append(f"<p style='color:{style.MUTED}'>Documented from:<br>{origin}</p>")
        against = [n for n in beliefs if n.contradicts]
        holds = [n for n in beliefs if not n.contradicts]
        html.append(
            f"<h3 style='margin:0'>Where this CPU contradicts common belief "
            f"({len(against)} notes)</h3>"
        )
        sources: dict[str, dict[str, list[Note]]] = {}
        for n in against:
            sources.setdefault(n.source, {}).setdefault(n.verdict, []).append(n)
        for source, verdicts in sources.items():
            rows = [f"<i>{source}</i>"]
            for verdict, notes in verdicts.items():
                rows.append(f"<b>{verdict}</b>: {', '.join(n.op for n in notes)}")
            html.append(
                f"<table width='100%' cellpadding='4' style='background:{NOTE_BACKGROUND};"
                f"border:1px solid {NOTE_BORDER}; margin-top:4px'><tr><td>"
                + "<br>".join(rows)
                + "</td></tr></table>"
            )
        if not against:
            html.append("<p>None: every belief checked holds here.</p>")
        if holds:
            ops = ", ".join(dict.fromkeys(n.op for n in holds))
            html.append(
                f"<p style='color:{style.MUTED}'>Holds on this CPU too (forced to float32 as "
                f"on CUDA): {ops}.</p>"
            )
        self.notesView.setHtml("".join(html))

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
        t = self.policyTable
        return [
            r
            for r in range(t.rowCount())
            if (item := t.item(r, OP_COL)) is not None and item.data(ROW_KIND_ROLE) == "op"
        ]

    def _op_name(self, row: int) -> str:
        return str(cell(self.policyTable, row, OP_COL).data(Qt.ItemDataRole.UserRole))

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
