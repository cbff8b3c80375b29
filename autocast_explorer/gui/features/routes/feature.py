"""Installs the Routes tab and its chart export."""

from __future__ import annotations

from typing import Any

from autocast_explorer.gui.features.routes.view import RoutesView
from autocast_explorer.gui.shell.context import AppContext


def install(ctx: AppContext) -> dict[str, Any]:
    view = RoutesView()
    ctx.add_view(
        "routes",
        view,
        "Routes",
        "Eager autocast, torch.compile and oneDNN's implicit bf16: latency, compile time, "
        "error and agreement against eager float32.",
    )

    def has_routes() -> bool:
        result = ctx.last_result()
        return result is not None and bool(result.routes)

    ctx.add_chart_export("routes", "&Routes latency chart…", lambda: view.latencyChart, has_routes)
    return {
        "routesView": view,
        "routesLatencyPlot": view.latencyChart,
        "routesCompilePlot": view.compileChart,
        "routesTable": view.table,
    }
