"""The Overview tab: the verdict in large type, the machine it was measured on, the three charts.

The header is a result view like the charts; its sentence and reasons come from
core.experiment.headline, built on the same speed call as the verdict the status bar, the CLI
and reports show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from autocast_explorer.gui.charts.agreement_chart import AgreementChart
from autocast_explorer.gui.charts.dtype_chart import DtypeChart
from autocast_explorer.gui.charts.latency_chart import LatencyChart
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.labels import wrapping_label
from autocast_explorer.gui.shell.reflow import ReflowRow, scroll_page
from autocast_explorer.gui.shell.result_view import ResultView

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

IDLE_HEADLINE = "Set a model on the left and press Run (F5)."


WHY_TIP = (
    "Why the headline says what it says: the speedup's interval, the machine's load, stalled "
    "timing blocks, what would help, the hardware, the agreement, the time guard's forecast "
    "and the run's warnings (Space opens and closes it; View › Why this verdict, Ctrl+Shift+Y)."
)


class ResultHeader(QWidget):
    """The headline (one sentence), a "Why?" disclosure with the reasons, the time guard and
    the warnings behind it, the config + machine line and a finding (a result view).

    The headline is short so that the charts stay in sight at 1024×640 with 150% text; what
    qualifies it (core.experiment.headline) waits behind "Why?" until asked for.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultHeader")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        self.headline = QLabel(IDLE_HEADLINE)
        self.headline.setObjectName("headlineLabel")
        self.headline.setWordWrap(True)
        self.headline.setFont(style.text_font(14, bold=True))
        self.headline.setToolTip("The verdict of the last run, in one sentence.")
        self.headline.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.whyButton = self._build_why_button()
        self.whyPanel = self._build_why_panel()
        self.details = wrapping_label(
            "detailsLabel",
            "The config and the machine the numbers were measured on.",
            color=style.MUTED,
        )
        self.finding = wrapping_label(
            "autocastErrorLabel",
            "The autocast forward raised: torch's message and what it means. Only float32 "
            "was measured.",
            rich=True,
        )
        self.finding.setStyleSheet(
            f"background: {style.ERROR_BACKGROUND}; padding: 6px; border-radius: 4px;"
        )
        self.finding.hide()
        for widget in (self.headline, self.whyButton, self.whyPanel, self.details, self.finding):
            layout.addWidget(widget)

    def _build_why_button(self) -> QToolButton:
        """A disclosure: an arrow and "Why?", reached with Tab and toggled with Space."""
        button = QToolButton()
        button.setObjectName("verdictWhyButton")
        button.setText("Why?")
        button.setCheckable(True)
        button.setAutoRaise(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setArrowType(Qt.ArrowType.RightArrow)
        button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        button.setToolTip(WHY_TIP)
        button.toggled.connect(self.set_why_shown)
        button.hide()
        return button

    def _build_why_panel(self) -> QWidget:
        """The reasons, then the time guard's forecast and the warnings: hidden until asked."""
        panel = QWidget()
        panel.setObjectName("verdictWhyPanel")
        box = QVBoxLayout(panel)
        box.setContentsMargins(16, 0, 0, 4)
        box.setSpacing(2)
        self.why = wrapping_label("verdictWhyLabel", "What the headline rests on, one a line.")
        self.why.setTextFormat(Qt.TextFormat.PlainText)
        self.guard = wrapping_label("guardLabel", "", color=style.MUTED)
        self.guard.setFont(style.text_font(8.5))
        self.guard.hide()
        self.warnings = wrapping_label(
            "warningsLabel", "Things that make these numbers less certain.", color=style.WARN
        )
        self.warnings.hide()
        for label in (self.why, self.guard, self.warnings):
            box.addWidget(label)
        panel.hide()
        return panel

    @Slot(bool)
    def set_why_shown(self, shown: bool) -> None:
        """Open or close the reasons behind the headline (the button follows)."""
        if self.whyButton.isChecked() != shown:
            self.whyButton.setChecked(shown)  # toggled comes back here once
            return
        self.whyButton.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.whyPanel.setVisible(shown and self.whyButton.isVisibleTo(self))

    def why_shown(self) -> bool:
        return self.whyButton.isChecked()

    def set_headline(self, text: str) -> None:
        self.headline.setText(text)

    def show_result(self, result: ExperimentResult) -> None:
        from html import escape

        from autocast_explorer.core.experiment.config_words import model_options
        from autocast_explorer.core.experiment.fallback import silent_fallbacks
        from autocast_explorer.core.experiment.headline import headline
        from autocast_explorer.core.experiment.summary import (
            autocast_error_finding,
            fast_path_sentence,
            guard_line,
        )

        cfg = result.config
        env = result.environment
        said = headline(result)
        self.headline.setText(said.sentence)
        self.headline.setStyleSheet(f"color: {style.BAD};" if said.raised else "")
        self.why.setText("\n".join(f"• {reason}" for reason in said.why))
        path = fast_path_sentence(result)
        self.details.setText(
            f"{cfg.title} · batch {cfg.batch}{model_options(cfg)} · autocast "
            f"{cfg.dtype}   |   {env.cpu_model} · torch {env.torch_version} · "
            f"{env.cpu_capability} · {env.threads_text}"
            + (f"\nTransformer: {path}" if path else "")
        )
        raised, meaning = autocast_error_finding(result)
        silent = silent_fallbacks(result)
        self.finding.setText(
            f"<b>torch said:</b> <code>{escape(result.autocast_error)}</code><br>"
            f"<b>What it means:</b> {escape(meaning)}"
            if raised
            else "<br>".join(
                f"<b>Finding: {escape(f.headline)}.</b><br>{escape(f.meaning)}" for f in silent
            )
        )
        self.finding.setVisible(bool(raised or silent))
        guard = guard_line(result)
        self.guard.setText(guard[:1].upper() + guard[1:])
        self.guard.setToolTip(
            "The time guard refuses configs whose forward would take over 10 s; it calibrates "
            "on the model's own ops. Basis: " + (result.guard.basis if result.guard else "")
        )
        self.guard.setVisible(bool(guard))
        self.warnings.setText("\n".join(f"⚠ {w}" for w in result.warnings))
        self.warnings.setVisible(bool(result.warnings))
        self.whyButton.show()
        self.set_why_shown(self.why_shown())

    def clear(self) -> None:
        self.headline.setText(IDLE_HEADLINE)
        self.headline.setStyleSheet("")
        for label in (self.details, self.finding, self.why, self.guard, self.warnings):
            label.setText("")
        for widget in (self.finding, self.guard, self.warnings, self.whyButton, self.whyPanel):
            widget.hide()


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
