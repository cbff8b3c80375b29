"""Installs the Routes tab and its chart export."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget

from autocast_explorer.core.experiment.route_kinds import route_kinds
from autocast_explorer.gui.charts.routes_chart import RoutesCompileChart, RoutesLatencyChart
from autocast_explorer.gui.features.routes.view import RoutesView
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle


def _route_words() -> str:
    """'eager (autocast), compiled (compiled autocast) and implicit (fp32_precision=bf16)'."""
    words = [f"{kind.name} ({kind.label})" for kind in route_kinds()]
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else words[0]


def install(ctx: AppContext) -> None:
    view = RoutesView()
    ctx.add_view(
        "routes",
        view,
        "Routes",
        f"{_route_words()}: latency, compile time, error and agreement against eager float32.",
    )

    def has_routes() -> bool:
        result = ctx.last_result()
        return result is not None and bool(result.routes)

    ctx.add_chart_export("routes", "&Routes latency chart…", lambda: view.latencyChart, has_routes)
    ctx.publish(Handle("routesView", RoutesView), view)
    ctx.publish(Handle("routesLatencyPlot", RoutesLatencyChart), view.latencyChart)
    ctx.publish(Handle("routesCompilePlot", RoutesCompileChart), view.compileChart)
    ctx.publish(Handle("routesTable", QTableWidget), view.table)
