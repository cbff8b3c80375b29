"""The Placements tab (Run › Time placements, F7): per-call vs hoisted vs pre-cast autocast."""

from __future__ import annotations

from PySide6.QtGui import QAction

from autocast_explorer.gui.features.placements.tab import PlacementsTab
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle


def install(ctx: AppContext) -> None:
    tab = PlacementsTab(ctx)
    ctx.add_view(
        "placements",
        tab,
        "Placements",
        "Per-call vs hoisted vs pre-cast: where autocast's time goes.",
    )

    def time_placements() -> None:
        ctx.show_view("placements")
        if not tab.start_placements():
            ctx.show_message(f"Not started: {tab.timeButton.toolTip()}")

    action = ctx.add_action(
        "Time &placements",
        time_placements,
        menu="&Run",
        shortcut="F7",
        tip="Per-call vs hoisted vs pre-cast autocast for the current config",
    )
    ctx.add_chart_export(
        "placements", "&Placements chart…", lambda: tab.chart, lambda: tab.report is not None
    )
    tab.shownChanged.connect(ctx.refresh_actions)
    ctx.publish(Handle("placementsAction", QAction), action)
