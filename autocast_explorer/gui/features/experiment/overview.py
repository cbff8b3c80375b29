"""The Overview tab: the verdict in large type, the machine it was measured on, the three charts.

The header is a result view like the charts; the sentence comes from core.summary.verdict so
window, CLI and reports say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from autocast_explorer.gui.charts.agreement_chart import AgreementChart
from autocast_explorer.gui.charts.dtype_chart import DtypeChart
from autocast_explorer.gui.charts.latency_chart import LatencyChart
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import ReflowRow, scroll_page
from autocast_explorer.gui.shell.result_view import ResultView

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

IDLE_HEADLINE = "Set a model on the left and press Run (F5)."


class ResultHeader(QWidget):
    """Verdict headline, config + machine line, and warnings (a result view)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultHeader")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        self.headline = QLabel(IDLE_HEADLINE)
        self.headline.setObjectName("headlineLabel")
        self.headline.setWordWrap(True)
        font = self.headline.font()
        font.setPointSize(14)
        font.setBold(True)
        self.headline.setFont(font)
        self.headline.setToolTip("The verdict of the last run, in one sentence.")
        self.details = QLabel("")
        self.details.setObjectName("detailsLabel")
        self.details.setWordWrap(True)
        self.details.setStyleSheet(f"color: {style.MUTED};")
        self.details.setToolTip("The config and the machine the numbers were measured on.")
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.finding = QLabel("")
        self.finding.setObjectName("autocastErrorLabel")
        self.finding.setWordWrap(True)
        self.finding.setTextFormat(Qt.TextFormat.RichText)
        self.finding.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.finding.setStyleSheet(
            f"background: {style.ERROR_BACKGROUND}; padding: 6px; border-radius: 4px;"
        )
        self.finding.setToolTip(
            "The autocast forward raised: torch's message and what it means. Only float32 "
            "was measured."
        )
        self.finding.hide()
        self.guard = QLabel("")
        self.guard.setObjectName("guardLabel")
        self.guard.setWordWrap(True)
        self.guard.setStyleSheet(f"color: {style.MUTED};")
        self.guard.setFont(style.text_font(8.5))
        self.guard.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.guard.hide()
        self.warnings = QLabel("")
        self.warnings.setObjectName("warningsLabel")
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet(f"color: {style.WARN};")
        self.warnings.setToolTip("Things that make these numbers less certain.")
        self.warnings.hide()
        for label in (self.headline, self.details, self.finding, self.guard, self.warnings):
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
            layout.addWidget(label)

    def set_headline(self, text: str) -> None:
        self.headline.setText(text)

    def show_result(self, result: ExperimentResult) -> None:
        from html import escape

        from autocast_explorer.core.experiment.config_words import model_options
        from autocast_explorer.core.experiment.fallback import silent_fallbacks
        from autocast_explorer.core.experiment.summary import (
            autocast_error_finding,
            fast_path_sentence,
            guard_line,
            verdict,
        )

        cfg = result.config
        env = result.environment
        headline, meaning = autocast_error_finding(result)
        sentence = headline or verdict(result)
        self.headline.setText(sentence[:1].upper() + sentence[1:])
        self.headline.setStyleSheet(f"color: {style.BAD};" if headline else "")
        path = fast_path_sentence(result)
        self.details.setText(
            f"{cfg.title} · batch {cfg.batch}{model_options(cfg)} · autocast "
            f"{cfg.dtype}   |   {env.cpu_model} · torch {env.torch_version} · "
            f"{env.cpu_capability} · {env.threads_text}"
            + (f"\nTransformer: {path}" if path else "")
        )
        silent = silent_fallbacks(result)
        self.finding.setText(
            f"<b>torch said:</b> <code>{escape(result.autocast_error)}</code><br>"
            f"<b>What it means:</b> {escape(meaning)}"
            if headline
            else "<br>".join(
                f"<b>Finding: {escape(f.headline)}.</b><br>{escape(f.meaning)}" for f in silent
            )
        )
        self.finding.setVisible(bool(headline or silent))
        guard = guard_line(result)
        self.guard.setText(guard[:1].upper() + guard[1:])
        self.guard.setToolTip(
            "The time guard refuses configs whose forward would take over 10 s; it calibrates "
            "on the model's own ops. Basis: " + (result.guard.basis if result.guard else "")
        )
        self.guard.setVisible(bool(guard))
        self.warnings.setText("\n".join(f"⚠ {w}" for w in result.warnings))
        self.warnings.setVisible(bool(result.warnings))

    def clear(self) -> None:
        self.headline.setText(IDLE_HEADLINE)
        self.headline.setStyleSheet("")
        self.details.setText("")
        self.finding.setText("")
        self.finding.hide()
        self.guard.setText("")
        self.guard.hide()
        self.warnings.setText("")
        self.warnings.hide()


class OverviewTab(QWidget):
    """Header on top; latency and agreement side by side (stacked when narrow); the dtype grid
    across the bottom; all in a scroll page so a narrow window scrolls instead of cutting."""

    #: Below this width per chart (at 100% text), latency and agreement stack: their titles
    #: and axes need it (narrower, the title shrinks to fit).
    CHART_WIDTH = 300
    CHART_MIN_WIDTH = 250

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("overviewTab")
        self.header = ResultHeader()
        self.latency = LatencyChart()
        self.agreement = AgreementChart()
        self.dtypes = DtypeChart()
        # Narrower than the charts' own minimum (300 px): at 150% text between the controls
        # and the Lessons panel a stacked chart gets about 290 px.
        for chart in (self.latency, self.agreement, self.dtypes):
            chart.setMinimumWidth(self.CHART_MIN_WIDTH)
        self.chartsRow = ReflowRow([(self.latency, 1), (self.agreement, 1)], self.CHART_WIDTH)
        self.chartsRow.setObjectName("overviewChartsRow")
        content = QWidget()
        box = QVBoxLayout(content)
        box.setContentsMargins(4, 4, 4, 4)
        box.setSpacing(8)
        box.addWidget(self.header)
        box.addWidget(self.chartsRow, 5)
        box.addWidget(self.dtypes, 3)
        # Not `scroll`: that would hide QWidget.scroll(dx, dy).
        self.scrollArea = scroll_page(content, "overviewScroll")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scrollArea)

    def views(self) -> list[ResultView]:
        return [self.header, self.latency, self.agreement, self.dtypes]

    def show_result(self, result: ExperimentResult) -> None:
        for view in self.views():
            view.show_result(result)

    def clear(self) -> None:
        for view in self.views():
            view.clear()
