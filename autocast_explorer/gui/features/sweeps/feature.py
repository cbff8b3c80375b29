"""The Sweeps tab (Run › Run sweep, F6), its files and chart exports.

`window.sweeps` (what `install` hands back) is the tester's handle on the three sweep-era tabs:
`.sweeps` is this feature's tab; `.placements` and `.hardware` are looked up by view id
through the context, so this module imports neither feature.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from autocast_explorer.gui.features.sweeps.tab import SweepsTab
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.spec import SweepSpec

#: The chart exports the sweep-era tabs add, in the Export menu's order.
SWEEP_EXPORTS = ("sweep_latency", "speedup", "heatmap", "roofline", "placements")


class SweepsHandle(QObject):
    """The Sweeps tab's menu actions and file operations on the last finished sweep."""

    def __init__(self, ctx: AppContext, tab: SweepsTab) -> None:
        super().__init__(tab)
        self.setObjectName("sweepsInstall")
        self._ctx = ctx
        self.sweeps = tab
        has_sweep = lambda: tab.last_sweep is not None  # noqa: E731
        has_grid = lambda: tab.last_sweep is not None and tab.last_sweep.is_grid  # noqa: E731
        tip = "Measure the sweep set in the Sweeps tab"
        ctx.menu("&Run").addSeparator()
        self.runSweepAction = ctx.add_action(
            "&Run sweep", self._run_sweep, menu="&Run", shortcut="F6", tip=tip
        )
        self.saveSweepJsonAction = ctx.add_action(
            "Save s&weep as JSON…",
            self._save_json,
            menu="&File",
            before="exportMenu",
            shortcut="Ctrl+Alt+S",
            tip="The last finished sweep (autocast-explorer/sweep/1)",
            enabled_when=has_sweep,
        )
        self.saveSweepCsvAction = ctx.add_action(
            "Save sweep as CS&V…",
            self._save_csv,
            menu="&File",
            before="exportMenu",
            shortcut="Ctrl+Alt+Shift+S",
            tip="One row per point of the last finished sweep",
            enabled_when=has_sweep,
        )
        ctx.add_chart_export(
            "sweep_latency",
            "&Sweep latency chart…",
            lambda: tab.latencyPlot,
            has_sweep,
            new_section=True,
        )
        ctx.add_chart_export(
            "speedup",
            "Sp&eedup chart…",
            lambda: tab.speedupPlot,
            lambda: has_sweep() and not has_grid(),
        )
        ctx.add_chart_export(
            "heatmap", "Speedup &heatmap (grid)…", lambda: tab.speedupHeatmap, has_grid
        )
        tab.shownChanged.connect(ctx.refresh_actions)
        tab.sweepFinished.connect(ctx.publish_sweep)
        ctx.sweepRequested.connect(self._on_sweep_requested)
        # A sweep preset chosen before this tab was built (the app's window lists the presets
        # while torch loads, and builds this tab after).
        self._on_sweep_requested(ctx.requested_sweep)

    # ---- the other sweep-era tabs, by view id ----------------------------------------------
    @property
    def placements(self) -> QWidget | None:
        return self._ctx.view("placements")

    @property
    def hardware(self) -> QWidget | None:
        return self._ctx.view("hardware")

    @property
    def exportActions(self) -> dict[str, QAction]:
        actions = self._ctx.export_actions()
        return {key: actions[key] for key in SWEEP_EXPORTS if key in actions}

    # ---- actions -----------------------------------------------------------------------------
    @Slot()
    def _run_sweep(self) -> None:
        self._ctx.show_view("sweeps")
        if not self.sweeps.start_sweep():
            self._ctx.show_message(f"Not started: {self.sweeps.runSweepButton.toolTip()}")

    @Slot(object)
    def _on_sweep_requested(self, spec: SweepSpec | None) -> None:
        """A sweep preset was chosen: its parameter and values go into the inputs (a request
        forgotten, None, leaves them as they are)."""
        if spec is None:
            return
        width_values = ",".join(map(str, spec.width_values)) if spec.is_grid else None
        param = "grid" if spec.is_grid else spec.param
        self.sweeps.set_sweep(param, ",".join(map(str, spec.values)), width_values)

    # ---- files -------------------------------------------------------------------------------
    def charts(self) -> dict[str, Any]:
        return {key: self._ctx.chart(key) for key in SWEEP_EXPORTS}

    def save_sweep_json(self, path: str | Path) -> bool:
        sweep = self.sweeps.last_sweep
        return sweep is not None and self._ctx.write_file(path, sweep.to_json(), "the sweep")

    def save_sweep_csv(self, path: str | Path) -> bool:
        sweep = self.sweeps.last_sweep
        return sweep is not None and self._ctx.write_file(path, sweep.to_csv(), "the sweep CSV")

    def export_chart(self, key: str, path: str | Path) -> bool:
        return self._ctx.export_chart(key, path)

    def ask_save_path(self, title: str, name: str, filters: str) -> tuple[str, str]:
        return QFileDialog.getSaveFileName(self._ctx.host(), title, str(Path.cwd() / name), filters)

    @Slot()
    def _save_json(self) -> None:
        path, _ = self.ask_save_path("Save sweep as JSON", "autocast-sweep.json", "JSON (*.json)")
        if path:
            self.save_sweep_json(path)

    @Slot()
    def _save_csv(self) -> None:
        path, _ = self.ask_save_path("Save sweep as CSV", "autocast-sweep.csv", "CSV (*.csv)")
        if path:
            self.save_sweep_csv(path)


#: The Sweeps tab's calls (the window's `save_sweep` goes through it).
SWEEPS = Handle("sweeps", SweepsHandle)


def install(ctx: AppContext) -> None:
    tab = SweepsTab(ctx)
    ctx.add_view(
        "sweeps", tab, "Sweeps", "When does autocast pay? Latency and speedup over many sizes."
    )
    ctx.publish(SWEEPS, SweepsHandle(ctx, tab))
