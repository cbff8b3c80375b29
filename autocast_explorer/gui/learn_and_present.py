"""Issue 5 in the window: lessons, presets, presentation mode, Compare, reports, settings.

`install_learn_and_present(window)` is the one call MainWindow.__init__ makes; each feature
lives in its own module and is installed here in an order that matters: presentation first
(others add to its View menu), settings last (it restores the docks and the presentation
state the others created).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.gui.compare_window import install_compare
from autocast_explorer.gui.lessons_panel import install_lessons
from autocast_explorer.gui.presentation import audit_shortcuts, install_presentation, set_tip
from autocast_explorer.gui.presets_box import install_presets
from autocast_explorer.gui.settings import install_settings

if TYPE_CHECKING:
    from autocast_explorer.gui.main_window import MainWindow


class ReportExporter(QObject):
    """File › Export report… (Ctrl+E): core.report.write_report with the window's charts."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.action = QAction("Export &report…", window)
        self.action.setObjectName("Export_report")
        self.action.setShortcut(QKeySequence("Ctrl+E"))
        set_tip(
            self.action,
            "Write a folder with the charts (PNG), result.json, result.csv, report.md and "
            "reproduce.py",
        )
        self.action.triggered.connect(self.export)
        self.action.setEnabled(False)
        window.resultShown.connect(self._on_result)
        self.last_report = None

    @Slot(object)
    def _on_result(self, _result: object) -> None:
        self.action.setEnabled(True)

    @Slot()
    def export(self) -> Path | None:
        """Ask for a folder and write the report of the result shown now."""
        w = self._window
        if w.last_result is None:
            return None
        folder = QFileDialog.getExistingDirectory(w, "Export report into folder", str(Path.cwd()))
        if not folder:
            return None
        return self.export_to(Path(folder))

    def export_to(self, folder: Path) -> Path | None:
        from autocast_explorer.core.documents.report import ReportError, write_report
        from autocast_explorer.gui.report_charts import window_chart_writer

        w = self._window
        try:
            report = write_report(w.last_result, folder, window_chart_writer(w))
        except (OSError, ValueError, ReportError) as exc:
            text = getattr(exc, "strerror", None) or exc
            w.messageBanner.setText(f"Could not export the report to {folder}: {text}")
            w.messageBanner.show()
            return None
        self.last_report = report
        w.statusBar().showMessage(
            f"Report written to {report.directory} ({len(report.files)} files)", 8000
        )
        return report.markdown


def install_learn_and_present(window: MainWindow) -> None:
    """Everything issue 5 adds to the window (one line in MainWindow.__init__ calls this)."""
    install_presentation(window)
    install_presets(window)
    install_lessons(window)
    install_compare(window)
    exporter = ReportExporter(window)
    window.reportExporter = exporter
    file_menu = window.menu("&File")
    anchor = window.menu("&File").findChild(QObject, "exportMenu")
    before = anchor.menuAction() if anchor is not None else None
    file_menu.insertAction(before, exporter.action)
    window.exportReportAction = exporter.action
    audit_shortcuts(window)
    install_settings(window)
