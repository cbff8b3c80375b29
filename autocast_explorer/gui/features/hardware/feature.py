"""The Hardware tab: what this CPU offers, the verdict, oneDNN's kernel (F8), the roofline."""

from __future__ import annotations

from PySide6.QtGui import QAction

from autocast_explorer.gui.features.hardware.tab import HardwareTab
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle


def install(ctx: AppContext) -> None:
    tab = HardwareTab(ctx)
    ctx.add_view(
        "hardware",
        tab,
        "Hardware",
        "What this CPU offers for low precision; roofline; the verdict.",
    )
    ctx.sweepFinished.connect(tab.show_sweep)

    def ask_onednn() -> None:
        ctx.show_view("hardware")
        if not tab.start_probe():
            ctx.show_message(f"Not started: {tab.probeButton.toolTip()}")

    action = ctx.add_action(
        "Ask &oneDNN which kernel runs",
        ask_onednn,
        menu="&Run",
        name="askOnednnAction",
        shortcut="F8",
        tip="oneDNN's verbose log of one forward per mode, for the current config",
    )
    ctx.add_chart_export(
        "roofline", "&Roofline chart…", lambda: tab.rooflinePlot, lambda: tab.verdict is not None
    )
    # The verdict changes after the tab's own slots ran: re-check the export entry then.
    for changed in (ctx.engineReady, ctx.resultShown, ctx.sweepFinished, tab.probeFinished):
        changed.connect(ctx.refresh_actions)
    ctx.publish(Handle("onednnAction", QAction), action)
