"""The Routes view: latency per route and side, compile time apart, error and agreement.

Everything shown is the result's RouteResult list (core/experiment/routes/); a result
without routes (eager alone, or training) shows how to ask for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.route_kinds import other_routes, route_kinds
from autocast_explorer.core.experiment.route_summary import route_cells as core_route_cells
from autocast_explorer.gui.charts.routes_chart import RoutesCompileChart, RoutesLatencyChart
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.reflow import reflow_below

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.certainty import SpeedCall
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.routes import RouteResult

COLUMNS = (
    "route",
    "float32 ms",
    "lower ms",
    "speedup",
    "lower side",
    "output",
    "compile",
    "SQNR",
    "agree",
    "recompiles",
)


def empty_text() -> str:
    """What a result without routes shows: how to ask for each registered route."""
    reference = route_kinds()[0]
    others = " or ".join(f"<b>{kind.name}</b> ({kind.help})" for kind in other_routes())
    return (
        f"Only {reference.name} {reference.label} was measured. Tick {others} beside Run to "
        "measure them beside it."
    )


def route_cells(route: RouteResult, call: SpeedCall | None = None) -> list[str]:
    """One table row: core's cells for the route (its own interval and call), then its
    recompiles."""
    recompiles = "—" if route.recompiles is None else str(route.recompiles)
    return [*core_route_cells(route, call), recompiles]


class RoutesView(QWidget):
    """objectName `routesView`: the two charts, the table (`routesTable`) and the findings
    (`routesFindings`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("routesView")
        layout = QVBoxLayout(self)
        self.introLabel = QLabel(empty_text())
        self.introLabel.setObjectName("routesIntro")
        self.introLabel.setWordWrap(True)
        self.introLabel.setToolTip("Which routes the run on screen measured.")
        layout.addWidget(self.introLabel)
        charts = QHBoxLayout()
        self.latencyChart = RoutesLatencyChart()
        self.compileChart = RoutesCompileChart()
        charts.addWidget(self.latencyChart, 3)
        charts.addWidget(self.compileChart, 1)
        reflow_below(charts, 560)
        layout.addLayout(charts, 3)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("routesTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip(
            "Each route timed float32 against its lower side (median ms). SQNR and agree "
            "(argmax agreement) compare the lower side's output with eager float32; output is "
            "the dtype the lower side returned; compile is torch.compile's first calls."
        )
        layout.addWidget(self.table, 1)
        self.findingsLabel = QLabel("")
        self.findingsLabel.setObjectName("routesFindings")
        self.findingsLabel.setWordWrap(True)
        self.findingsLabel.setToolTip("What each route did, measured in this run.")
        self.findingsLabel.setStyleSheet(f"color: {style.TEXT};")
        layout.addWidget(self.findingsLabel)

    def show_result(self, result: ExperimentResult) -> None:
        from autocast_explorer.core.experiment.speed_words import untold_words

        routes = result.routes
        self.latencyChart.show_routes(routes, [untold_words(result.route_call(r)) for r in routes])
        self.compileChart.show_routes(routes)
        self.table.setRowCount(len(routes))
        for row, route in enumerate(routes):
            for column, text in enumerate(route_cells(route, result.route_call(route))):
                item = QTableWidgetItem(text)
                item.setToolTip(route.finding or text)
                self.table.setItem(row, column, item)
        if routes:
            names = ", ".join(r.name for r in routes)
            self.introLabel.setText(f"Routes measured in this run: {names}.")
        else:
            self.introLabel.setText(empty_text())
        lines = [f"<b>{r.name}</b>: {_escape(r.finding)}" for r in routes if r.finding]
        self.findingsLabel.setText("<br>".join(lines))

    def clear(self) -> None:
        self.latencyChart.clear()
        self.compileChart.clear()
        self.table.setRowCount(0)
        self.introLabel.setText(empty_text())
        self.findingsLabel.setText("")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
