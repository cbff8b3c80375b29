"""The menu bar: menus made on first use (always before Help), and the window's own entries.

Features add their entries through the context (`ctx.menu`, `ctx.add_action`); what is here is
what the window itself offers: File (open, save, CSV, the chart export submenu, quit), Run and
Cancel, and Help. Each entry is a public attribute of the window (`window.openAction` …).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from autocast_explorer.gui.shell.keys import StandardKey

if TYPE_CHECKING:
    from autocast_explorer.gui.shell.actions import ActionRegistry
    from autocast_explorer.gui.window.files import WindowFiles


class MenuBar:
    """The window's menus by name ('&File' and 'File' are one menu, objectName `fileMenu`)."""

    def __init__(self, window: QMainWindow) -> None:
        self._window = window
        self._menus: dict[str, QMenu] = {}

    def menu(self, name: str) -> QMenu:
        """The menu titled `name` ('&' ignored), created before Help if it does not exist."""
        key = name.replace("&", "").lower()
        if key in self._menus:
            return self._menus[key]
        menu = QMenu(name, self._window)
        menu.setObjectName(f"{key}Menu")
        menu.setToolTipsVisible(True)
        help_menu = self._menus.get("help")
        bar = self._window.menuBar()
        if help_menu is not None:
            bar.insertMenu(help_menu.menuAction(), menu)
        else:
            bar.addMenu(menu)
        self._menus[key] = menu
        return menu


class MenuHost(Protocol):
    """The window's side: what its entries do, and the attributes they are kept in."""

    openAction: QAction
    saveJsonAction: QAction
    saveAsAction: QAction
    saveCsvAction: QAction
    quitAction: QAction
    runAction: QAction
    cancelAction: QAction
    helpAction: QAction
    aboutQtAction: QAction
    aboutAction: QAction

    def menu(self, name: str) -> QMenu: ...
    def engine_ready(self) -> bool: ...
    def start_experiment(self) -> bool: ...
    def cancel_experiment(self) -> None: ...
    def close(self) -> bool: ...


def add_file_entries(
    window: MenuHost, actions: ActionRegistry, files: WindowFiles, has_result: Callable[[], bool]
) -> None:
    """File: open, save, save as, the latency CSV, the chart exports, quit."""
    add = actions.add
    file_menu = window.menu("&File")
    window.openAction = add(
        "&Open result JSON…",
        files.open,
        menu=file_menu,
        shortcut=StandardKey.Open,
        tip="Show a result saved earlier (no new measurement).",
        enabled_when=window.engine_ready,
    )
    file_menu.addSeparator().setObjectName("fileSaveSection")
    window.saveJsonAction = add(
        "&Save result",
        files.save,
        menu=file_menu,
        name="Save_result",
        shortcut=StandardKey.Save,
        tip="Save the result as JSON: to its file if it has one, else ask where",
        enabled_when=has_result,
    )
    window.saveAsAction = add(
        "Save result &As…",
        files.save_as,
        menu=file_menu,
        shortcut=StandardKey.SaveAs,
        tip="Save the result as JSON in a file you choose",
        enabled_when=has_result,
    )
    window.saveCsvAction = add(
        "Export latency &CSV…",
        files.save_csv,
        menu=file_menu,
        name="Export_latency_CSV",
        shortcut="Ctrl+Shift+E",
        tip="Write the latency rows (one per mode) as CSV",
        enabled_when=has_result,
    )
    export_menu = file_menu.addMenu("&Export chart as PNG/SVG")
    export_menu.setObjectName("exportMenu")
    files.export_menu = export_menu
    file_menu.addSeparator()
    window.quitAction = add("&Quit", window.close, menu=file_menu, shortcut=StandardKey.Quit)
    window.quitAction.setMenuRole(QAction.MenuRole.QuitRole)


def add_run_entries(
    window: MenuHost,
    actions: ActionRegistry,
    can_run: Callable[[], bool],
    can_cancel: Callable[[], bool],
) -> None:
    """Run and Cancel head the Run menu (F5 and Esc belong to the buttons; the menu shows them)."""
    run_menu = window.menu("&Run")
    window.runAction = actions.add(
        "&Run experiment\tF5",
        window.start_experiment,
        menu=run_menu,
        name="Run_experiment",
        enabled_when=can_run,
    )
    window.runAction.setToolTip("Measure this config: plain float32 vs autocast (F5)")
    window.cancelAction = actions.add(
        "&Cancel run\tEsc",
        window.cancel_experiment,
        menu=run_menu,
        name="Cancel_run",
        enabled_when=can_cancel,
    )
    window.cancelAction.setToolTip("Stop the run at the next timing block (Esc)")
    run_menu.addSeparator()
    # View: the panes and tabs to show first, then (after this line) how everything looks.
    window.menu("&View").addSeparator().setObjectName("viewDisplaySection")


def add_help_entries(
    window: MenuHost,
    actions: ActionRegistry,
    show_help: Callable[[], object],
    show_about: Callable[[], None],
) -> None:
    """Help: the manual (F1), About Qt, About Autocast Explorer."""
    help_menu = window.menu("&Help")
    window.helpAction = actions.add(
        "Autocast Explorer &Help",
        show_help,
        menu=help_menu,
        name="Help",
        shortcut=StandardKey.HelpContents,
        tip="The keyboard shortcuts and the manual, opened at the window's section",
    )
    help_menu.addSeparator()
    window.aboutQtAction = actions.add(
        "About &Qt…",
        QApplication.aboutQt,
        menu=help_menu,
        name="About_Qt",
        tip="The Qt version this window runs on and Qt's licence (LGPL)",
    )
    window.aboutQtAction.setMenuRole(QAction.MenuRole.AboutQtRole)
    window.aboutAction = actions.add(
        "&About Autocast Explorer…",
        show_about,
        menu=help_menu,
        name="About",
        tip="Versions of torch, Qt and pyqtgraph; this CPU's low-precision features",
    )
    window.aboutAction.setMenuRole(QAction.MenuRole.AboutRole)
