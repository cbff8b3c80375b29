"""The Ops tab: what CPU autocast does to each common op, probed live (Run › F9)."""

from __future__ import annotations

from PySide6.QtGui import QAction

from autocast_explorer.gui.features.ops.panel import OpsPanel
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

PROBE_SHORTCUT = "F9"  # Ctrl+Shift+P is "Save config as preset…"


def install(ctx: AppContext) -> None:
    panel = OpsPanel(ctx)
    ctx.add_view(
        "ops",
        panel,
        "Ops",
        "Live op-policy probe: what CPU autocast does to each common op, measured here.",
        result_view=False,
    )

    def probe() -> None:
        ctx.show_view("ops")
        panel.start_probe()

    # In the Run menu beside the other measurements; the Ops tab is where it is explained.
    action = ctx.add_action(
        "Probe op &policies",
        probe,
        menu="&Run",
        name="probeAction",
        shortcut=PROBE_SHORTCUT,
        tip="Run the op-policy probe on the Ops tab.",
    )
    ctx.publish(Handle("opsPanel", OpsPanel), panel)
    ctx.publish(Handle("probeAction", QAction), action)
