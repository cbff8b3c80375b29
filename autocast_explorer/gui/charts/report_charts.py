"""Chart images for reports: from the window's charts, or drawn offscreen for the CLI.

File › Export report… passes `plots_chart_writer(plots)` (the window's own chart widgets) to
core.report.write_report: the charts exactly as the window shows them. `autocast-explorer run
--report DIR` has no window, so `offscreen_chart_writer(result)` builds the same chart widgets,
draws the result in them with Qt's offscreen platform (a QApplication is created only for that,
and only if none exists) and exports them the same way (pyqtgraph's ImageExporter via
charts.export, written atomically).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyqtgraph as pg

    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.reports.report import Report

#: (chart id, title in report.md, file name) for every chart a report carries.
REPORT_CHARTS: tuple[tuple[str, str, str], ...] = (
    ("latency", "Latency per forward", "latency.png"),
    ("dtype", "Dtype per layer", "dtypes.png"),
    ("agreement", "Prediction agreement", "agreement.png"),
)
#: Charts a report of a training run carries as well.
TRAINING_REPORT_CHARTS: tuple[tuple[str, str, str], ...] = (
    ("loss", "Training loss per step", "loss.png"),
)
#: The size the offscreen charts are laid out at (the PNG is twice as wide: gui.export).
OFFSCREEN_SIZES = {
    "latency": (640, 440),
    "dtype": (900, 300),
    "agreement": (640, 440),
    "loss": (760, 440),
}

ChartWriter = Callable[[Path], Sequence[tuple[str, str]]]


def export_plots(plots: dict[str, pg.PlotWidget], folder: Path) -> list[tuple[str, str]]:
    """Write each plot as PNG into `folder`; (title, file name) per image, in report order."""
    from autocast_explorer.gui.charts.export import export_chart

    written = []
    for chart_id, title, filename in REPORT_CHARTS + TRAINING_REPORT_CHARTS:
        plot = plots.get(chart_id)
        if plot is not None:
            export_chart(plot, folder / filename)
            written.append((title, filename))
    return written


def plots_chart_writer(plots: dict[str, pg.PlotWidget]) -> ChartWriter:
    """A chart writer for core.report.write_report that exports these (on-screen) charts."""

    def write(folder: Path) -> list[tuple[str, str]]:
        return export_plots(plots, folder)

    return write


def ensure_application() -> object:
    """The running QApplication, or a new one on the offscreen platform (nothing is shown)."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        # "-platform offscreen" beats $QT_QPA_PLATFORM and $DISPLAY: nothing is shown, and an
        # unreachable display cannot abort the process.
        app = QApplication(["autocast-explorer", "-platform", "offscreen"])
        _keep.append(app)  # never destroyed before the widgets it made
    return app


_keep: list[object] = []


def render_chart_pngs(result: ExperimentResult, folder: Path) -> list[tuple[str, str]]:
    """Draw `result` in fresh chart widgets offscreen and write them as PNG into `folder`."""
    ensure_application()
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from autocast_explorer.gui.charts.agreement_chart import AgreementChart
    from autocast_explorer.gui.charts.dtype_chart import DtypeChart
    from autocast_explorer.gui.charts.latency_chart import LatencyChart
    from autocast_explorer.gui.charts.loss_chart import LossChart
    from autocast_explorer.gui.shell import style

    style.apply_plot_style()
    plots = {"latency": LatencyChart(), "dtype": DtypeChart(), "agreement": AgreementChart()}
    if result.train is not None:
        plots["loss"] = LossChart()
    try:
        for chart_id, plot in plots.items():
            plot.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            plot.resize(*OFFSCREEN_SIZES[chart_id])
            plot.show()  # lays the plot out at its size; nothing reaches a screen
            plot.show_result(result)
        QApplication.processEvents()
        return export_plots(plots, folder)
    finally:
        for plot in plots.values():
            plot.close()
            plot.deleteLater()
        QApplication.processEvents()


def offscreen_chart_writer(
    result: ExperimentResult,
    deferred: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> ChartWriter:
    """Draws the charts offscreen inside `deferred()` (the CLI's signal deferral: Ctrl-C
    raised inside Qt's paint code is swallowed or fatal, so it waits until Qt is done)."""

    def write(folder: Path) -> list[tuple[str, str]]:
        with deferred():
            return render_chart_pngs(result, folder)

    return write


def write_report_with_charts(
    result: ExperimentResult,
    directory: str | os.PathLike[str],
    deferred: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> tuple[Report, str]:
    """The report with chart PNGs; without them (and the reason) if Qt cannot draw them.

    Either way the folder is swapped in whole (core.reports.report), never half written.
    """
    from autocast_explorer.core.documents.files import UnwritablePath
    from autocast_explorer.core.reports.report import write_report

    try:
        return write_report(result, directory, offscreen_chart_writer(result, deferred)), ""
    except ImportError as exc:
        reason = f"Qt could not be loaded ({exc})"
    except UnwritablePath:
        raise
    except (RuntimeError, ValueError) as exc:
        reason = f"the charts could not be drawn ({type(exc).__name__}: {exc})"
    return write_report(result, directory), reason
