"""Overview and Layers: the verdict and the three result charts of one run, and every layer
with the layers the next run keeps in float32.

The controls column that describes the run belongs to the shell (it owns the config); this
feature draws what each run measured.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot

from autocast_explorer.gui.charts.agreement_chart import AgreementChart
from autocast_explorer.gui.charts.dtype_chart import DtypeChart
from autocast_explorer.gui.charts.latency_chart import LatencyChart
from autocast_explorer.gui.features.experiment.layer_table import LayerTable
from autocast_explorer.gui.features.experiment.overview import OverviewTab
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

LOADING_TEXT = "Loading PyTorch…"


class _Headline(QObject):
    """'Loading PyTorch…' in the header until torch is in (Run is enabled then)."""

    def __init__(self, ctx: AppContext, overview: OverviewTab) -> None:
        super().__init__(overview)
        self._ctx = ctx
        self._overview = overview
        overview.header.set_headline(LOADING_TEXT)
        ctx.torchLoaded.connect(self._on_ready)

    @Slot()
    def _on_ready(self) -> None:
        if self._ctx.last_result() is None:
            self._overview.header.clear()


def _add_why_action(ctx: AppContext, overview: OverviewTab, has_result: Callable[[], bool]) -> None:
    """View › Why this verdict: the Overview's "Why?" disclosure from the menu (and its keys)."""
    header = overview.header

    def show_why(shown: bool) -> None:
        header.set_why_shown(shown)
        if shown:
            ctx.show_view("overview")

    action = ctx.add_action(
        "&Why this verdict?",
        show_why,
        menu="&View",
        before="viewDisplaySection",
        checkable=True,
        shortcut="Ctrl+Shift+Y",
        tip="Show the reasons behind the Overview's headline",
        enabled_when=has_result,
    )
    header.whyButton.toggled.connect(action.setChecked)


def install(ctx: AppContext) -> None:
    overview = OverviewTab()
    layers = LayerTable()
    layers.bind(ctx.bind_inputs(layers.binding()))
    ctx.add_view("overview", overview, "Overview", "The verdict and the three charts.")
    ctx.add_view(
        "layers",
        layers,
        "Layers",
        "Every layer with its measured dtypes, and the layers the next run keeps in float32.",
    )
    ctx.experimentFailed.connect(layers.show_failure)
    ctx.experimentStarted.connect(lambda _config: layers.show_message(""))
    # The three charts are views of their own (a lesson points at one by its id).
    ctx.add_view_part("latency", overview.latency, within="overview")
    ctx.add_view_part("dtype", overview.dtypes, within="overview")
    ctx.add_view_part("agreement", overview.agreement, within="overview")
    _Headline(ctx, overview)
    has_result = lambda: ctx.last_result() is not None  # noqa: E731
    _add_why_action(ctx, overview, has_result)
    ctx.add_chart_export("latency", "&Latency chart…", lambda: overview.latency, has_result)
    ctx.add_chart_export("dtype", "&Dtype per layer chart…", lambda: overview.dtypes, has_result)
    ctx.add_chart_export("agreement", "&Agreement chart…", lambda: overview.agreement, has_result)
    ctx.publish(Handle("overview", OverviewTab), overview)
    ctx.publish(Handle("layerTable", LayerTable), layers)
    ctx.publish(Handle("latencyPlot", LatencyChart), overview.latency)
    ctx.publish(Handle("dtypePlot", DtypeChart), overview.dtypes)
    ctx.publish(Handle("agreementPlot", AgreementChart), overview.agreement)
