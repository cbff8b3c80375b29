"""The Hardware tab: what this CPU offers for the autocast dtype, what was measured, the roofline.

Facts and sentences come from core: the flags and torch's own queries (core.hardware via
core.verdict.HardwareVerdict), which oneDNN kernel ran (core.onednn, captured from oneDNN's
verbose log), the verdict sentence (core.verdict: the latest sweep's; before any sweep, a
flags-only one or the last single run's) and the roofline (core.roofline), whose peaks are
estimates shown with their formula and inputs.
"""

from __future__ import annotations

import functools
import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.charts.roofline_chart import NOTHING_MEASURED, RooflineChart
from autocast_explorer.gui.features.hardware.basis import Basis, flags_basis, run_basis, sweep_basis
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import ReflowRow, scroll_page
from autocast_explorer.gui.shell.tables import cell

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.core.hardware.onednn import OneDnnProbe
    from autocast_explorer.core.sweeps.result import SweepResult
    from autocast_explorer.core.sweeps.roofline import Roofline
    from autocast_explorer.core.sweeps.verdict import HardwareVerdict
    from autocast_explorer.gui.shell.context import AppContext
    from autocast_explorer.gui.tasks.runner import TaskState

PRESENT = "✓ present"
ABSENT = "✗ absent"
NOT_PROBED = "not asked yet: run a sweep or press “Ask oneDNN”"
#: The roofline's minimum height at 100% text: title, axes with captions, its legend row
#: (two lines in a narrow window) and a plot tall enough to read its decades.
ROOFLINE_MIN_HEIGHT = 320
TORCH_QUERY = "torch.ops.mkldnn._is_mkldnn_%s_supported(): torch's own answer (oneDNN may emulate)."
PROBE_TIP = (
    "Run one float32 and one autocast forward of the current config with oneDNN's verbose "
    "log captured, to see which kernel (and ISA) really ran."
)


def probe_task(config: ExperimentConfig, state: TaskState) -> OneDnnProbe:
    """On the worker thread: core.experiment.onednn_probe.probe_config for the current config."""
    from autocast_explorer.core.experiment.onednn_probe import probe_config

    return probe_config(config, progress=state.set_progress, cancel=state.is_interruption_requested)


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def _kernels(kernels: tuple, fallback: str) -> str:
    gemms = [k.implementation for k in kernels if k.primitive in ("matmul", "inner_product")]
    return ", ".join(dict.fromkeys(gemms)) or fallback


class FactsTable(QTableWidget):
    """A table whose rows grow with their wrapped text and which is as tall as its rows."""

    def fit(self) -> None:
        self.resizeRowsToContents()
        height = self.horizontalHeader().height() + 2 * self.frameWidth() + 2
        height += sum(self.rowHeight(i) for i in range(self.rowCount()))
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()  # the stretched value column got its width: re-wrap


class HardwareTab(QWidget):
    """objectName `hardwareTab`. A result view; also shows sweeps and oneDNN probes."""

    probeFinished = Signal(object)
    probeFailed = Signal(str)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.setObjectName("hardwareTab")
        self._ctx = ctx
        self.client = ctx.tasks("hardware")
        self.verdict: HardwareVerdict | None = None
        self.probe: OneDnnProbe | None = None
        self.basis = "nothing"
        self._env: Environment | None = None
        self._run: ExperimentResult | None = None
        #: The latest run whose call was not too noisy: the one GFLOP/s may come from.
        self._trusted: ExperimentResult | None = None
        self._sweep: SweepResult | None = None
        self._build()
        self.client.busyChanged.connect(self._update_actions)
        self.client.progress.connect(self._on_probe_progress)
        self.client.finished.connect(self._on_probe_finished)
        self.client.failed.connect(self._on_probe_failed)
        self.client.cancelled.connect(self._on_probe_cancelled)
        ctx.engineReady.connect(self._on_engine_ready)
        ctx.configChanged.connect(self._on_config_changed)
        if ctx.engine_ready():  # the app's window builds this tab once the engine has loaded
            self._on_engine_ready()
        self._update_actions()

    # ---- construction ------------------------------------------------------------------------
    def _build(self) -> None:
        self.verdictHeadline = QLabel("Waiting for PyTorch to load…")
        self.verdictHeadline.setObjectName("hardwareVerdictLabel")
        self.verdictHeadline.setWordWrap(True)
        font = self.verdictHeadline.font()
        font.setPointSize(13)
        font.setBold(True)
        self.verdictHeadline.setFont(font)
        self.verdictHeadline.setToolTip(
            "The hardware verdict (core.verdict): built from the CPU flags and the latest "
            "measurement (a sweep if there is one)."
        )
        self.basisLabel = QLabel("")
        self.basisLabel.setObjectName("hardwareBasisLabel")
        self.basisLabel.setWordWrap(True)
        self.basisLabel.setStyleSheet(f"color: {style.MUTED};")
        self.basisLabel.setToolTip("Which measurement the verdict is built from.")

        self.table = FactsTable(0, 2)
        self.table.setObjectName("hardwareTable")
        self.table.setHorizontalHeaderLabels(["", "On this machine"])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.ResizeToContents
        )
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.setAlternatingRowColors(True)
        self.table.setToolTip(
            "CPU facts from torch.cpu.get_capabilities() and torch's own queries. Without the "
            "flags for a dtype its matrix products convert their operands and compute in "
            "float32 kernels; 'What ran instead' and the oneDNN probe say which ran here."
        )
        self.onednnLabel = QLabel("")
        self.onednnLabel.setObjectName("onednnLabel")
        self.onednnLabel.setWordWrap(True)
        self.onednnLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.onednnLabel.setToolTip("oneDNN's verbose log for one forward per mode (core.onednn).")
        self.probeButton = QPushButton("Ask oneDNN which kernel runs")
        self.probeButton.setObjectName("probeButton")  # documented name; find it within hardwareTab
        self.probeButton.clicked.connect(self.start_probe)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table)
        left_layout.addWidget(self.onednnLabel)
        left_layout.addWidget(self.probeButton)
        left_layout.addStretch(1)
        left.setMinimumWidth(360)
        left.setMaximumWidth(430)

        self.rooflinePlot = RooflineChart()
        self.formulaLabel = QLabel("")
        self.formulaLabel.setObjectName("rooflineFormulaLabel")
        self.formulaLabel.setWordWrap(True)
        self.formulaLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.formulaLabel.setToolTip("How the roofline's numbers were estimated (core.roofline).")
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.rooflinePlot, 1)
        right_layout.addWidget(self.formulaLabel)

        # The roofline keeps the height its axes need; the formula sits below it, never over it.
        self.rooflinePlot.setMinimumHeight(ROOFLINE_MIN_HEIGHT)
        # Facts and roofline side by side when both fit, else stacked; the page scrolls.
        self.middleRow = ReflowRow([(left, 0), (right, 1)], 360)
        self.middleRow.setObjectName("hardwareRow")
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.verdictHeadline)
        layout.addWidget(self.basisLabel)
        layout.addWidget(self.middleRow, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll_page(content, "hardwareScroll"))

    # ---- inputs ------------------------------------------------------------------------------
    def _dtype(self) -> str:
        try:
            return self._ctx.config().dtype
        except ConfigError:
            return self._ctx.dtype()

    @Slot()
    def _on_engine_ready(self) -> None:
        self._env = self._ctx.environment()
        self._refresh()
        self._update_actions()

    @Slot()
    def _on_config_changed(self) -> None:
        if self._sweep is None and self._run is None and self._env is not None:
            self._refresh()  # the flags-only verdict follows the dtype chosen on the left

    def show_result(self, result: ExperimentResult) -> None:
        """A single run: its speedup in the verdict and its point on the roofline (no sweep yet)."""
        self._run = result
        if result.autocast is not None and not result.speed_call.too_noisy:
            self._trusted = result
        self._env = self._env or result.environment
        self._refresh()

    def show_sweep(self, result: SweepResult) -> None:
        """A finished sweep: its verdict, its oneDNN probe, its roofline."""
        self._sweep = result
        if result.verdict.onednn is not None:
            self.probe = result.verdict.onednn
        self._refresh()

    def show_probe(self, probe: OneDnnProbe) -> None:
        self.probe = probe
        self._refresh()

    def clear(self) -> None:
        self._run = None
        self._trusted = None
        self._sweep = None
        self._refresh()

    # ---- drawing -----------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Show the verdict of the best basis there is: a sweep, else a run, else the flags."""
        basis = self._basis()
        if basis is None:
            self._show_nothing()
            return
        self.basis = basis.kind
        self.verdict = basis.verdict
        self.verdictHeadline.setText(basis.verdict.sentence)
        self.basisLabel.setText(basis.sentence)
        self._fill_table(basis.verdict)
        self.onednnLabel.setText(
            f"<b>oneDNN:</b> {html.escape(self.probe.summary, quote=False)}" if self.probe else ""
        )
        self.rooflinePlot.show_roofline(
            basis.roofline, basis.dtype, basis.source, basis.unplaced or NOTHING_MEASURED
        )
        self._show_formulas(basis.roofline)

    def _basis(self) -> Basis | None:
        """None until PyTorch has loaded (no flags to speak of)."""
        if self._sweep is not None:
            return sweep_basis(self._sweep)
        if self._run is not None and (measured := self._run.autocast) is not None:
            return run_basis(self._run, measured, self.probe, self._trusted)
        if self._env is not None:
            return flags_basis(self._env, self._dtype())
        return None

    def _show_nothing(self) -> None:
        self.verdict = None
        self.basis = "nothing"
        self.verdictHeadline.setText("Waiting for PyTorch to load…")
        self.basisLabel.setText("")
        self.table.setRowCount(0)
        self.rooflinePlot.clear()
        self.formulaLabel.setText("")
        self.onednnLabel.setText("")

    def _fill_table(self, v: HardwareVerdict) -> None:
        from autocast_explorer.core.hardware.onednn import onednn_version

        short = {"bfloat16": "bf16", "float16": "fp16"}.get(v.dtype, v.dtype)
        rows: list[tuple[str, str, bool | None, str]] = [
            ("CPU", v.cpu_model, None, "From /proc/cpuinfo or torch.cpu.get_capabilities()."),
            ("Cores / threads", f"{v.cores} / {v.threads}", None, "Cores; torch threads used."),
            ("torch capability", v.cpu_capability, None, "torch.backends.cpu.get_cpu_capability()"),
        ]
        rows += [
            (flag, PRESENT if on else ABSENT, on, f"CPU flag {flag} (torch.cpu.get_capabilities).")
            for flag, on in v.flags.items()
        ]
        rows += [
            ("torch: bf16 ok?", _yes_no(v.torch_bf16_supported), None, TORCH_QUERY % "bf16"),
            ("torch: fp16 ok?", _yes_no(v.torch_fp16_supported), None, TORCH_QUERY % "fp16"),
            # "no", not "emulated": what ran instead is measured (the row below, the probe).
            (f"Native {short}", "yes" if v.native else "no", v.native, v.hardware),
        ]
        if v.instead:
            rows.append(
                (
                    "What ran instead",
                    v.instead,
                    False,
                    "Derived from the oneDNN probe (which kernels ran) and the measured GFLOP/s "
                    "of each mode: why autocast is slower on a CPU without this dtype.",
                )
            )
        probe = self.probe
        version = (probe.version if probe else None) or onednn_version()
        if not v.mkldnn:
            onednn_text = "not in this torch build"
        else:
            onednn_text = f"available (v{version})" if version else "available"
        rows.append(("oneDNN", onednn_text, v.mkldnn, "torch.backends.mkldnn.is_available()"))
        if probe is None:
            rows.append(("Kernel that ran", NOT_PROBED, None, PROBE_TIP))
        elif not probe.determined:
            rows.append(("Kernel that ran", "could not be determined", None, probe.summary))
        else:
            rows.append(
                (f"{short} GEMM kernel", _kernels(probe.autocast_kernels, "?"), None, probe.summary)
            )
            rows.append(
                (
                    "fp32 GEMM kernel",
                    _kernels(probe.float32_kernels, "not oneDNN (MKL)"),
                    None,
                    probe.summary,
                )
            )
        if probe is not None and probe.cpu_isa:
            rows.append(("oneDNN ISA", probe.cpu_isa, None, "oneDNN's own 'isa:' info line."))
        self.table.setRowCount(len(rows))
        for i, (name, value, good, tip) in enumerate(rows):
            key = QTableWidgetItem(name)
            font = key.font()
            font.setBold(True)
            key.setFont(font)
            key.setToolTip(tip)
            item = QTableWidgetItem(value)
            item.setToolTip(f"{value}\n{tip}" if tip else value)
            if good is not None:
                item.setForeground(QColor(style.OK if good else style.MUTED))
            self.table.setItem(i, 0, key)
            self.table.setItem(i, 1, item)
        self._fit_rows()

    def _fit_rows(self) -> None:
        self.table.fit()

    def _show_formulas(self, roofline: Roofline) -> None:
        esc = functools.partial(html.escape, quote=False)
        lines = [f"<b>Peaks are estimates:</b> {esc(roofline.peak_formula)}"]
        notes: list[str] = []
        for peak in roofline.peaks.values():
            lines.append(f"<b>{peak.dtype}</b>: {esc(peak.formula)} [{esc(peak.isa)}]")
            for note in peak.note.split("; "):
                if note not in notes:
                    notes.append(note)
        sources = dict.fromkeys(p.ghz_source for p in roofline.peaks.values())
        lines.append(f"Assumed: clock from {esc(', '.join(sources))}; {esc('; '.join(notes))}")
        lines.append(f"<b>x, y:</b> {esc(roofline.bytes_formula)}; {esc(roofline.flops_formula)}")
        if roofline.note:
            lines.append(f"<span style='color:{style.WARN}'>⚠ {esc(roofline.note)}</span>")
        self.formulaLabel.setText("<br>".join(lines))

    # ---- asking oneDNN -----------------------------------------------------------------------
    @Slot()
    def start_probe(self) -> bool:
        """Ask oneDNN which kernels the current config runs; False if it cannot start."""
        if not self._ctx.engine_ready() or self.client.busy():
            return False
        try:
            config = self._ctx.config()
        except ConfigError as exc:
            self._ctx.show_banner(f"Fix the settings on the left first: {exc}")
            return False
        if not self.client.start(functools.partial(probe_task, config)):
            return False
        self.onednnLabel.setText("Asking oneDNN…")
        return True

    @Slot()
    def _update_actions(self) -> None:
        ready = self._ctx.engine_ready() and not self.client.busy()
        self.probeButton.setEnabled(ready)
        self.probeButton.setToolTip(PROBE_TIP if ready else "Wait for the current measurement.")

    @Slot(float, str)
    def _on_probe_progress(self, _fraction: float, message: str) -> None:
        self.onednnLabel.setText(message)

    @Slot(object)
    def _on_probe_finished(self, probe: object) -> None:
        self.show_probe(probe)  # type: ignore[arg-type]
        self.probeFinished.emit(probe)

    @Slot(str)
    def _on_probe_failed(self, message: str) -> None:
        self.onednnLabel.setText(f"Could not ask oneDNN: {message}")
        self.probeFailed.emit(message)

    @Slot()
    def _on_probe_cancelled(self) -> None:
        self.onednnLabel.setText("Cancelled.")

    # ---- read-back for tests -----------------------------------------------------------------
    def rows(self) -> list[tuple[str, str]]:
        return [
            (cell(self.table, i, 0).text(), cell(self.table, i, 1).text())
            for i in range(self.table.rowCount())
        ]

    def flags_shown(self) -> dict[str, bool]:
        """The flag rows as shown: name → present."""
        from autocast_explorer.core.sweeps.verdict import ARM_VERDICT_FLAGS, VERDICT_FLAGS

        names = VERDICT_FLAGS + ARM_VERDICT_FLAGS
        return {name: value == PRESENT for name, value in self.rows() if name in names}
