"""File › Export report… (Ctrl+E): the result on screen as a folder a person can share.

core.report.write_report writes result.json, result.csv, reproduce.py and report.md; the
charts are the window's own chart widgets (asked of the context by key), exported as PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

if TYPE_CHECKING:
    from autocast_explorer.core.reports.report import Report


class ReportExporter(QObject):
    """Asks for a folder (the menu) or takes one (`export_to`) and writes the report there."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        self._ctx = ctx
        self.last_report: Report | None = None
        self.action = ctx.add_action(
            "Export &report…",
            self.export,
            menu="&File",
            before="exportMenu",
            name="Export_report",
            shortcut="Ctrl+E",
            tip="Write a folder with the charts (PNG), result.json, result.csv, report.md and "
            "reproduce.py",
            enabled_when=lambda: ctx.last_result() is not None,
        )

    @Slot()
    def export(self) -> Path | None:
        """Ask for a folder and write the report of the result shown now."""
        if self._ctx.last_result() is None:
            return None
        folder = QFileDialog.getExistingDirectory(
            self._ctx.host(), "Export report into folder", str(Path.cwd())
        )
        if not folder:
            return None
        return self.export_to(Path(folder))

    def export_to(self, folder: Path) -> Path | None:
        """Write the report into `folder`; report.md, or None (the banner says why)."""
        from autocast_explorer.core.reports.report import ReportError, write_report
        from autocast_explorer.gui.charts.report_charts import (
            REPORT_CHARTS,
            TRAINING_REPORT_CHARTS,
            plots_chart_writer,
        )

        result = self._ctx.last_result()
        if result is None:
            return None
        charts = REPORT_CHARTS + (TRAINING_REPORT_CHARTS if result.train is not None else ())
        plots = {key: self._ctx.chart(key) for key, _title, _file in charts}
        writer = plots_chart_writer({k: p for k, p in plots.items() if p is not None})
        try:
            report = write_report(result, folder, writer)
        except (OSError, ValueError, ReportError) as exc:
            text = getattr(exc, "strerror", None) or exc
            self._ctx.show_banner(f"Could not export the report to {folder}: {text}")
            return None
        self.last_report = report
        self._ctx.show_message(
            f"Report written to {report.directory} ({len(report.files)} files)", 8000
        )
        return report.markdown


#: File › Export report (the window's `export_report` goes through it).
REPORT_EXPORTER = Handle("reportExporter", ReportExporter)


def install(ctx: AppContext) -> None:
    exporter = ReportExporter(ctx)
    ctx.publish(REPORT_EXPORTER, exporter)
    ctx.publish(Handle("exportReportAction", QAction), exporter.action)
