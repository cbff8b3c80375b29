"""Wiring issue 4 into the window: Sweeps, Placements and Hardware tabs, menus, files.

`install_sweeps(window)` is the one call MainWindow makes. It adds the three tabs with
`add_view`, Run menu entries (Run sweep F6, Time placements F7, Ask oneDNN F8) and File entries to
save the last sweep (core's to_json/to_csv, written atomically) and export its charts
(pyqtgraph exporters, like the window's own charts). Everything runs on the window's shared
runner, one task at a time, with its progress bar and Cancel (Esc).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from autocast_explorer.gui.features.hardware.tab import HardwareTab
from autocast_explorer.gui.features.placements.tab import PlacementsTab
from autocast_explorer.gui.features.sweeps.tab import SweepsTab

if TYPE_CHECKING:
    import pyqtgraph as pg

    from autocast_explorer.gui.shell.main_window import MainWindow

EXPORTS = (
    ("sweep_latency", "&Sweep latency chart…"),
    ("speedup", "Sp&eedup chart…"),
    ("heatmap", "Speedup &heatmap (grid)…"),
    ("roofline", "&Roofline chart…"),
    ("placements", "&Placements chart…"),
)


class SweepsInstall(QObject):
    """Owns the menu actions of the three tabs and the file operations on the last sweep."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.setObjectName("sweepsInstall")
        self.window = window
        self.sweeps = SweepsTab(window)
        self.placements = PlacementsTab(window)
        self.hardware = HardwareTab(window)
        window.add_view(self.sweeps, "Sweeps")
        window.add_view(self.placements, "Placements")
        window.add_view(self.hardware, "Hardware")
        tabs = window.resultTabs
        for widget, tip in (
            (self.sweeps, "When does autocast pay? Latency and speedup over many sizes."),
            (self.placements, "Per-call vs hoisted vs pre-cast: where autocast's time goes."),
            (self.hardware, "What this CPU offers for low precision; roofline; the verdict."),
        ):
            tabs.setTabToolTip(tabs.indexOf(widget), tip)
        self.sweeps.sweepFinished.connect(self.hardware.show_sweep)
        self.sweeps.shownChanged.connect(self._update_actions)
        window.engineReady.connect(self._update_actions)
        self._create_actions()
        self._update_actions()

    # ---- menus -------------------------------------------------------------------------------
    def _action(
        self, text: str, handler: Any, shortcut: str | None = None, tip: str = ""
    ) -> QAction:
        """A window action; its tooltip ends with its key, as every menu entry's does."""
        action = QAction(text, self.window)
        action.setObjectName(text.replace("&", "").rstrip("…").strip().replace(" ", "_"))
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
            tip = f"{tip.rstrip('.')} ({shortcut})." if tip else f"({shortcut})"
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(handler)
        return action

    def _create_actions(self) -> None:
        menu = self.window.menu("&Run")  # shared with whatever else runs things (F5 …)
        menu.setToolTipsVisible(True)
        if menu.actions():
            menu.addSeparator()
        self.runSweepAction = self._action(
            "&Run sweep", self._run_sweep, "F6", "Measure the sweep set in the Sweeps tab"
        )
        self.placementsAction = self._action(
            "Time &placements",
            self._time_placements,
            "F7",
            "Per-call vs hoisted vs pre-cast autocast for the current config",
        )
        self.probeAction = self._action(
            "Ask &oneDNN which kernel runs",
            self._probe,
            "F8",
            "oneDNN's verbose log of one forward per mode, for the current config",
        )
        for action in (self.runSweepAction, self.placementsAction, self.probeAction):
            menu.addAction(action)

        file_menu = self.window.menu("&File")
        self.saveSweepJsonAction = self._action(
            "Save s&weep as JSON…",
            self._save_json,
            "Ctrl+Alt+S",
            "The last finished sweep (autocast-explorer/sweep/1)",
        )
        self.saveSweepCsvAction = self._action(
            "Save sweep as CS&V…",
            self._save_csv,
            "Ctrl+Alt+Shift+S",
            "One row per point of the last finished sweep",
        )
        # Next to the result's own Save entries, before the export menu and Quit.
        export = self.window.findChild(QMenu, "exportMenu")
        before = export.menuAction() if export is not None else None
        for action in (self.saveSweepJsonAction, self.saveSweepCsvAction):
            if before is not None:
                file_menu.insertAction(before, action)
            else:
                file_menu.addAction(action)
        if export is None:  # a window without the export menu: make one
            export = file_menu.addMenu("&Export chart as PNG/SVG")
            export.setObjectName("exportMenu")
        export.addSeparator()
        self.exportActions: dict[str, QAction] = {}
        for key, title in EXPORTS:
            action = self._action(title, functools.partial(self._export, key))
            action.setObjectName(f"export_{key}")
            export.addAction(action)
            self.exportActions[key] = action
        for client in (self.sweeps.client, self.placements.client, self.hardware.client):
            client.busyChanged.connect(self._update_actions)
        self.placements.shownChanged.connect(self._update_actions)

    @Slot()
    def _update_actions(self, *_args: object) -> None:
        has_sweep = self.sweeps.last_sweep is not None
        self.saveSweepJsonAction.setEnabled(has_sweep)
        self.saveSweepCsvAction.setEnabled(has_sweep)
        has_grid = has_sweep and self.sweeps.last_sweep.is_grid
        for key, action in self.exportActions.items():
            enabled = {
                "sweep_latency": has_sweep,
                "speedup": has_sweep and not has_grid,
                "heatmap": has_grid,
                "roofline": self.hardware.verdict is not None,
                "placements": self.placements.report is not None,
            }[key]
            action.setEnabled(enabled)

    def _started(self, started: bool, button: Any) -> None:
        """A shortcut that cannot start says why in the status bar (the button's tooltip)."""
        if not started:
            self.window.statusBar().showMessage(f"Not started: {button.toolTip()}", 5000)

    @Slot()
    def _run_sweep(self) -> None:
        self.window.resultTabs.setCurrentWidget(self.sweeps)
        self._started(self.sweeps.start_sweep(), self.sweeps.runSweepButton)

    @Slot()
    def _time_placements(self) -> None:
        self.window.resultTabs.setCurrentWidget(self.placements)
        self._started(self.placements.start_placements(), self.placements.timeButton)

    @Slot()
    def _probe(self) -> None:
        self.window.resultTabs.setCurrentWidget(self.hardware)
        self._started(self.hardware.start_probe(), self.hardware.probeButton)

    # ---- files -------------------------------------------------------------------------------
    def charts(self) -> dict[str, pg.PlotWidget]:
        return {
            **self.sweeps.charts(),
            "roofline": self.hardware.rooflinePlot,
            "placements": self.placements.chart,
        }

    def ask_save_path(self, title: str, name: str, filters: str) -> tuple[str, str]:
        """The save dialog (tests replace this method to avoid a modal dialog)."""
        return QFileDialog.getSaveFileName(self.window, title, str(Path.cwd() / name), filters)

    def save_sweep_json(self, path: str | Path) -> bool:
        sweep = self.sweeps.last_sweep
        return sweep is not None and self.window.write_file(path, sweep.to_json(), "the sweep")

    def save_sweep_csv(self, path: str | Path) -> bool:
        sweep = self.sweeps.last_sweep
        return sweep is not None and self.window.write_file(path, sweep.to_csv(), "the sweep CSV")

    def export_chart(self, key: str, path: str | Path) -> bool:
        from autocast_explorer.gui.charts.export import chart_bytes

        suffix = Path(path).suffix.lower()
        try:
            data = chart_bytes(self.charts()[key], suffix)
        except (OSError, ValueError) as exc:
            self.window.show_banner(f"Could not export the chart: {exc}")
            return False
        return self.window.write_file(path, data, "the chart")

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

    def _export(self, key: str, *_checked: object) -> None:
        from autocast_explorer.gui.charts.export import FORMATS

        path, chosen = self.ask_save_path(
            "Export chart", f"autocast-{key.replace('_', '-')}.png", ";;".join(FORMATS.values())
        )
        if not path:
            return
        if Path(path).suffix.lower() not in FORMATS:
            path += ".svg" if "svg" in chosen.lower() else ".png"
        self.export_chart(key, path)


def install_sweeps(window: MainWindow) -> SweepsInstall:
    """Add the Sweeps, Placements and Hardware tabs and their menus to `window`."""
    install = SweepsInstall(window)
    window.sweeps = install  # type: ignore[attr-defined]
    return install
