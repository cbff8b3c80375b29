"""Save → open through the menu, and File › Export report… with the window's charts as PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.core.documents.report import RESULT_JSON
from autocast_explorer.gui.charts.report_charts import REPORT_CHARTS, render_chart_pngs
from autocast_explorer.gui.shell import style
from tests.gui.helpers import TINY, run_to_end


def colors_in(path: Path) -> set[str]:
    """Every color in a PNG, read back from the file."""
    image = QImage(str(path))
    assert not image.isNull(), path
    step = 2
    return {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    }


def test_save_then_open_through_the_menu_shows_the_same_result_everywhere(
    window, qtbot, monkeypatch, tmp_path
):
    window.set_config(TINY.replace(head="softmax"))
    result = run_to_end(qtbot, window)
    target = tmp_path / "saved.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.saveJsonAction.isEnabled()
    window.saveJsonAction.trigger()
    assert json.loads(target.read_text()) == json.loads(result.to_json())
    assert [p.name for p in tmp_path.iterdir()] == ["saved.json"]  # atomic: no temp file left

    layers_before = window.layerTable.rows()
    window.clear_results()
    assert window.latencyPlot.drawn()["heights"] == []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(target), ""))
    shown = []
    window.resultShown.connect(shown.append)
    window.openAction.trigger()
    loaded = window.last_result
    assert loaded.to_dict() == result.to_dict()
    assert shown == [loaded]
    assert not window.messageBanner.isVisible()
    assert window.latencyPlot.drawn()["heights"] == pytest.approx(
        [result.plain.median_ms, result.autocast.median_ms]
    )
    assert [c.out_dtype for c in window.dtypePlot.cells()] == [
        d.out_dtype for layer in result.layers for d in (layer.plain, layer.autocast)
    ]
    assert window.agreementPlot.drawn()["counts"] == list(result.agreement.histogram.counts)
    assert window.layerTable.rows() == layers_before
    assert window.overview.header.headline.text().lower() == window.verdictLabel.text().lower()
    assert window.exportReportAction.isEnabled()


def test_export_report_writes_the_charts_as_png_and_links_them(
    window, qtbot, monkeypatch, tmp_path
):
    assert not window.exportReportAction.isEnabled()  # nothing to report yet
    result = run_to_end(qtbot, window)
    folder = tmp_path / "report"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    window.exportReportAction.trigger()
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(
        ["report.md", "reproduce.py", "result.csv", "result.json"]
        + [filename for _id, _title, filename in REPORT_CHARTS]
    )
    markdown = (folder / "report.md").read_text()
    for _id, title, filename in REPORT_CHARTS:
        assert f"![{title}]({filename})" in markdown
        image = QImage(str(folder / filename))
        assert image.width() >= 2 * 200  # twice the on-screen width
    # The PNGs hold what the charts draw: both dtypes' bar colors in the latency chart.
    latency_colors = colors_in(folder / "latency.png")
    assert {style.dtype_color("float32"), style.dtype_color("bfloat16")} <= latency_colors
    assert style.HISTOGRAM in colors_in(folder / "agreement.png")
    assert json.loads((folder / RESULT_JSON).read_text()) == json.loads(result.to_json())
    assert window.reportExporter.last_report.directory == folder


def test_export_report_into_a_file_is_a_message_not_a_crash(window, qtbot, tmp_path):
    run_to_end(qtbot, window)
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    assert window.reportExporter.export_to(blocker) is None
    assert window.messageBanner.isVisible()
    assert window.messageBanner.text().startswith(f"Could not export the report to {blocker}")


def test_offscreen_charts_draw_a_result_without_a_window(window, qtbot, tmp_path):
    result = run_to_end(qtbot, window)
    written = render_chart_pngs(result, tmp_path)
    assert written == [(title, filename) for _id, title, filename in REPORT_CHARTS]
    colors = colors_in(tmp_path / "dtypes.png")
    assert {style.dtype_color("float32"), style.dtype_color("bfloat16")} <= colors
