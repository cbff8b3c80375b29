"""Issue 6 in the window: the Layer error, Agreement, Op trace and Ops tabs.

`install_numerics(window)` is the one call MainWindow makes; everything else goes through
the window's extension points (add_view, resultTabs, runner, the export menu).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from autocast_explorer.gui.charts.error_chart import ErrorView
from autocast_explorer.gui.features.numerics.agreement_view import AgreementView
from autocast_explorer.gui.features.numerics.optrace_view import OpTraceView
from autocast_explorer.gui.features.ops.panel import OpsPanel

if TYPE_CHECKING:
    from autocast_explorer.gui.shell.main_window import MainWindow

PROBE_SHORTCUT = "F9"  # Ctrl+Shift+P is "Save config as preset…"


class _ProbeActions(QObject):
    """The probe shortcut's slot (on a GUI-thread QObject, never a lambda)."""

    def __init__(self, window: MainWindow, panel: OpsPanel) -> None:
        super().__init__(window)
        self._window = window
        self._panel = panel

    @Slot()
    def probe(self) -> None:
        self._window.resultTabs.setCurrentWidget(self._panel)
        self._panel.start_probe()


def install_numerics(window: MainWindow) -> None:
    """Add the numerics tabs, the Ops tab, the probe shortcut and two chart exports."""
    window.errorView = ErrorView()
    window.errorPlot = window.errorView.chart
    window.agreementView = AgreementView()
    window.flipRatePlot = window.agreementView.flipChart
    window.opTraceView = OpTraceView()
    tips = (
        (window.errorView, "Layer error", "How much precision each layer gives up under autocast."),
        (
            window.agreementView,
            "Agreement",
            "Top-1 and top-k agreement, allclose, and which predictions flipped and why.",
        ),
        (
            window.opTraceView,
            "Op trace",
            "Every aten op of one plain and one autocast forward, with the casts autocast added.",
        ),
    )
    for view, title, tip in tips:
        window.add_view(view, title)
        window.resultTabs.setTabToolTip(window.resultTabs.indexOf(view), tip)

    window.opsPanel = OpsPanel(window)
    index = window.resultTabs.addTab(window.opsPanel, "Ops")
    window.resultTabs.setTabToolTip(
        index, "Live op-policy probe: what CPU autocast does to each common op, measured here."
    )

    # In the Run menu beside the other measurements; the Ops tab is where it is explained.
    actions = _ProbeActions(window, window.opsPanel)
    probe = QAction("Probe op &policies", window)
    probe.setObjectName("probeAction")
    probe.setShortcut(QKeySequence(PROBE_SHORTCUT))
    probe.setToolTip("Run the op-policy probe on the Ops tab.")
    probe.triggered.connect(actions.probe)
    window.addAction(probe)
    window.menu("&Run").addAction(probe)
    window.probeAction = probe

    export_menu = window.findChild(QMenu, "exportMenu")
    if export_menu is not None:
        for key, title, plot in (
            ("error", "Layer &error chart…", window.errorPlot),
            ("flip_rate", "&Flip rate chart…", window.flipRatePlot),
        ):
            action = QAction(title, window)
            action.setObjectName(f"export_{key}")
            action.triggered.connect(functools.partial(window._export, plot, key))
            export_menu.addAction(action)
            window.exportActions[key] = action
        window._update_file_actions()
