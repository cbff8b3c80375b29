"""Numerical truth: the Layer error, Agreement and Op trace tabs of the run on screen."""

from __future__ import annotations

from autocast_explorer.gui.charts.error_chart import ErrorChart, ErrorView
from autocast_explorer.gui.charts.flip_chart import FlipRateChart
from autocast_explorer.gui.features.numerics.agreement_view import AgreementView
from autocast_explorer.gui.features.numerics.optrace_view import OpTraceView
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle


def install(ctx: AppContext) -> None:
    """Three result views and the exports of their two charts."""
    error = ErrorView()
    agreement = AgreementView()
    optrace = OpTraceView()
    ctx.add_view(
        "error", error, "Layer error", "How much precision each layer gives up under autocast."
    )
    ctx.add_view(
        "agreement_detail",  # "agreement" is the Overview's agreement chart
        agreement,
        "Agreement",
        "Top-1 and top-k agreement, allclose, and which predictions flipped and why.",
    )
    ctx.add_view(
        "optrace",
        optrace,
        "Op trace",
        "Every aten op of one plain and one autocast forward, with the casts autocast added.",
    )
    has_result = lambda: ctx.last_result() is not None  # noqa: E731
    ctx.add_chart_export("error", "Layer &error chart…", lambda: error.chart, has_result)
    ctx.add_chart_export("flip_rate", "&Flip rate chart…", lambda: agreement.flipChart, has_result)
    ctx.publish(Handle("errorView", ErrorView), error)
    ctx.publish(Handle("errorPlot", ErrorChart), error.chart)
    ctx.publish(Handle("agreementView", AgreementView), agreement)
    ctx.publish(Handle("flipRatePlot", FlipRateChart), agreement.flipChart)
    ctx.publish(Handle("opTraceView", OpTraceView), optrace)
