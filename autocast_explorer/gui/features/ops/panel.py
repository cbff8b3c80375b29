"""The "Ops" tab: a live op-policy probe of CPU autocast on the installed torch.

Probe runs core.oppolicy.probe_ops on the window's shared TaskRunner (progress in the window's
bar, Cancel/Esc stops it between ops) and shows, for each op, the policy derived from the
dtypes it really returned and the output dtype of every input case. Notes where the
measurement contradicts common belief (CUDA's float32 list, the tutorial's softmax/mean claim)
are highlighted. Nothing here is hard-coded: an empty table until the probe has run.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import DTYPES
from autocast_explorer.gui.shell import style

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
    ("low_first", "mixed:\nlow 1st →"),
    ("float32_first", "mixed:\nfp32 1st →"),
)
CASE_TIPS = {
    "float32": "Output dtype with every floating input in float32.",
    "low": "Output dtype with every floating input in the autocast dtype.",
    "low_first": "Output dtype with the first input in the autocast dtype, the rest float32.",
    "float32_first": "Output dtype with the first input float32, the rest in the autocast dtype.",
}
OP_COLUMN_WIDTH = 170
ROW_HEIGHT = 22
COLUMNS = ("op", "policy", *(title for _case, title in CASE_COLUMNS))
NOTE_BACKGROUND = "#fff3cd"
NOTE_BORDER = "#e0a800"
IDLE = (
    "Press <b>Probe</b> (F9) to run 30+ common ops under torch.autocast('cpu') with "
    "float32, low-precision and mixed inputs and classify each from the dtypes it returns, "
    "on this torch and this CPU."
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
        bar = QHBoxLayout()
        bar.addWidget(self.probeButton)
        dtype_label = QLabel("autocast &dtype:")
        dtype_label.setBuddy(self.probeDtypeCombo)
        dtype_label.setToolTip(self.probeDtypeCombo.toolTip())
        bar.addWidget(dtype_label)
        bar.addWidget(self.probeDtypeCombo)
        bar.addWidget(self.saveProbeButton)
        bar.addWidget(self.statusLabel, 1)

        self.legend = QLabel("")
        self.legend.setObjectName("policyLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setToolTip("What each policy means; derived from observed output dtypes.")

        self.policyTable = QTableWidget(0, len(COLUMNS))
        self.policyTable.setObjectName("opsPolicyTable")
        self.policyTable.setHorizontalHeaderLabels(COLUMNS)
        self.policyTable.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.policyTable.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.policyTable.verticalHeader().setVisible(False)
        self.policyTable.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.policyTable.setToolTip(
            "Each op under torch.autocast('cpu'): its policy and the output dtype it returned "
            "for each input case (— : the op takes one floating input). Hover a row for why; "
            "⚠ marks ops where common belief is wrong on this CPU."
        )
        header = self.policyTable.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, OP_COLUMN_WIDTH)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.policyTable.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        for c, (case, _title) in enumerate(CASE_COLUMNS, start=2):
            self.policyTable.horizontalHeaderItem(c).setToolTip(CASE_TIPS[case])

        self.notesView = QTextBrowser()
        self.notesView.setObjectName("probeNotes")
        self.notesView.setOpenLinks(False)
        self.notesView.setToolTip(
            "Common beliefs about autocast (the CUDA float32 list in the PyTorch AMP docs, the "
            "tutorial's softmax/mean claim) next to what this probe measured."
        )
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("opsSplitter")
        splitter.addWidget(self.policyTable)
        splitter.addWidget(self.notesView)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([560, 360])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(bar)
        layout.addWidget(self.legend)
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
        self._update_actions()
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
    def show_probe(self, probe: ProbeResult) -> None:
        """Fill the table, legend and notes from a probe result (a run or a loaded file)."""
        self.last_probe = probe
        low = probe.dtype
        contradicted = {n.op for n in probe.notes if n.contradicts}
        table = self.policyTable
        table.setRowCount(len(probe.ops))
        bold = QFont(table.font())
        bold.setBold(True)
        for r, op in enumerate(probe.ops):
            name = QTableWidgetItem(("⚠ " if op.name in contradicted else "") + op.name)
            if op.name in contradicted:
                name.setBackground(QColor(NOTE_BACKGROUND))
                name.setFont(bold)
            policy = QTableWidgetItem(op.policy)
            color = policy_color(op.policy, low)
            policy.setBackground(QColor(color))
            policy.setForeground(QColor("white"))
            policy.setFont(bold)
            policy.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            tip = f"{op.name}: {op.policy}: {op.why}"
            for item in (name, policy):
                item.setToolTip(tip)
                item.setData(Qt.ItemDataRole.UserRole, op.policy)
            table.setItem(r, 0, name)
            table.setItem(r, 1, policy)
            for c, (case, _title) in enumerate(CASE_COLUMNS, start=2):
                table.setItem(r, c, self._case_item(op, case))
        self._show_legend(low)
        self._show_notes(probe)
        env = probe.environment
        counts = ", ".join(f"{len(v)} {k}" for k, v in probe.by_policy().items())
        self.statusLabel.setText(
            f"<b>{len(probe.ops)} ops</b> probed with {low} on torch {env.torch_version}, "
            f"{env.cpu_model}: {counts}."
        )
        self._update_actions()

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
            out = c.out_dtype or "?"
            item = QTableWidgetItem(out)
            item.setBackground(_tinted(style.dtype_color(out)))
            item.setToolTip(
                f"inputs {', '.join(c.in_dtypes)} → output {out}; {c.casts} cast(s) dispatched"
            )
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        return item

    def _show_legend(self, low: str) -> None:
        parts = []
        for policy, meaning in POLICY_MEANINGS.items():
            color = policy_color(policy, low)
            parts.append(
                f"<span style='background:{color}; color:white'>&nbsp;<b>{policy}</b>&nbsp;"
                f"</span> {meaning}"
            )
        self.legend.setText("<br>".join(parts))

    def _show_notes(self, probe: ProbeResult) -> None:
        """Contradicted beliefs highlighted, one box per source, ops grouped by verdict."""
        against = [n for n in probe.notes if n.contradicts]
        holds = [n for n in probe.notes if not n.contradicts]
        html = [
            f"<h3 style='margin:0'>Where this CPU contradicts common belief "
            f"({len(against)} notes)</h3>"
        ]
        sources: dict[str, dict[str, list[Note]]] = {}
        for n in against:
            sources.setdefault(n.source, {}).setdefault(n.verdict, []).append(n)
        for source, verdicts in sources.items():
            rows = [f"<i>{source}</i>"]
            for verdict, notes in verdicts.items():
                rows.append(f"<b>{verdict}</b>:")
                rows += [f"&nbsp;&nbsp;• <b>{n.op}</b>: {n.measured}" for n in notes]
            html.append(
                f"<table width='100%' cellpadding='5' style='background:{NOTE_BACKGROUND};"
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
    def policies(self) -> dict[str, str]:
        """op name → policy, as held by the table's items."""
        t = self.policyTable
        return {
            t.item(r, 0).text().removeprefix("⚠ "): t.item(r, 1).text() for r in range(t.rowCount())
        }

    def policy_colors(self) -> dict[str, str]:
        t = self.policyTable
        return {
            t.item(r, 0).text().removeprefix("⚠ "): t.item(r, 1).background().color().name()
            for r in range(t.rowCount())
        }

    def case_outputs(self, op: str) -> dict[str, str]:
        """The output-dtype cells of one op's row, by case name."""
        t = self.policyTable
        for r in range(t.rowCount()):
            if t.item(r, 0).text().removeprefix("⚠ ") == op:
                return {
                    case: t.item(r, c).text()
                    for c, (case, _title) in enumerate(CASE_COLUMNS, start=2)
                }
        raise KeyError(op)

    def flagged_ops(self) -> list[str]:
        """Ops marked ⚠ (a contradicted belief) in the table."""
        t = self.policyTable
        return [
            t.item(r, 0).text().removeprefix("⚠ ")
            for r in range(t.rowCount())
            if t.item(r, 0).text().startswith("⚠ ")
        ]
