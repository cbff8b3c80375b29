"""The Lessons dock and its menu: where the panel lives in the window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget

from autocast_explorer.gui.features.lessons.panel import LessonsPanel
from autocast_explorer.gui.shell.actions import set_tip
from autocast_explorer.gui.shell.handles import Handle

if TYPE_CHECKING:
    from autocast_explorer.gui.shell.context import AppContext


#: The lessons panel (the settings keeper saves and restores its step).
LESSONS_PANEL = Handle("lessonsPanel", LessonsPanel)


def install(ctx: AppContext) -> None:
    """The Lessons dock (hidden at first; View › Lessons, Ctrl+L) and the Lessons menu."""
    window = ctx.host()
    panel = LessonsPanel(ctx)
    dock = QDockWidget("Lessons", window)
    dock.setObjectName("lessonsDock")
    dock.setWidget(panel)
    dock.setMinimumWidth(300)
    dock.setFeatures(
        QDockWidget.DockWidgetFeature.DockWidgetClosable
        | QDockWidget.DockWidgetFeature.DockWidgetMovable
        | QDockWidget.DockWidgetFeature.DockWidgetFloatable
    )
    dock.setToolTip("The tutorial's steps as live experiments (Ctrl+L shows or hides this).")
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resizeDocks([dock], [340], Qt.Orientation.Horizontal)
    dock.hide()
    toggle = dock.toggleViewAction()
    toggle.setText("&Lessons")
    toggle.setObjectName("Lessons")
    toggle.setShortcut(QKeySequence("Ctrl+L"))
    set_tip(toggle, "Show or hide the guided lessons")
    # Qt's action shows the dock on `triggered` only: setChecked(True) must show it too.
    toggle.toggled.connect(dock.setVisible)
    view = ctx.menu("&View")
    if view.actions():  # first in the menu
        view.insertAction(view.actions()[0], toggle)
    else:
        view.addAction(toggle)
    menu = ctx.menu("&Lessons")
    menu.addAction(toggle)
    menu.addSeparator()
    for action in (panel.previousAction, panel.nextAction, panel.runStepAction):
        menu.addAction(action)
        action.setEnabled(False)
    dock.visibilityChanged.connect(panel._on_dock_visible)
    ctx.publish(LESSONS_PANEL, panel)
    ctx.publish(Handle("lessonsDock", QDockWidget), dock)
    ctx.publish(Handle("lessonsAction", QAction), toggle)
