"""Save → open through the menu, and File › Export report… with the window's charts as PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.core.experiment.headline import headline
from autocast_explorer.core.experiment.pace import ms_text
from autocast_explorer.core.experiment.summary import guard_line, verdict
from autocast_explorer.core.reports.report import RESULT_JSON
from autocast_explorer.gui.charts.report_charts import REPORT_CHARTS, render_chart_pngs
from autocast_explorer.gui.shell import style
from tests.edits import edited, retimed
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
    header = window.overview.header
    assert header.headline.text() == headline(loaded).sentence == headline(result).sentence
    assert window.verdictLabel.text() == verdict(result)
    # The time guard's forecast sits behind "Why?" with the reasons, read back from the file too.
    guard = header.guard
    assert loaded.guard == result.guard and result.guard is not None
    assert not guard.isVisibleTo(window)
    header.whyButton.click()
    assert guard.isVisibleTo(window)
    assert guard.text() == "T" + guard_line(result)[1:]
    assert f"estimated {ms_text(result.guard.estimated_forward_ms)}" in guard.text()
    assert f"measured {ms_text(result.slower_ms)}" in guard.text()
    assert window.exportReportAction.isEnabled()


def test_export_report_writes_the_charts_as_png_and_links_them(
    window, qtbot, monkeypatch, tmp_path, timing_noise
):
    assert not window.exportReportAction.isEnabled()  # nothing to report yet
    timing_noise.clear(0.5)  # the paired blocks agree with the bars set below: solid bars
    measured = run_to_end(qtbot, window)
    # The bar colours below are read from the PNG, so both bars must be tall enough to hold
    # pixels: show the measured result with autocast's latency set to twice float32's (a
    # stalled or non-native bf16 run can be 1000× slower, leaving float32 a sub-pixel bar).
    result = retimed(
        measured,
        autocast=edited(
            measured.plain,
            median_ms=2 * measured.plain.median_ms,
            p25_ms=2 * measured.plain.p25_ms,
            p75_ms=2 * measured.plain.p75_ms,
        ),
    )
    window.show_result(result)
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


def test_save_writes_the_results_own_file_save_as_asks_and_csv_is_an_export(
    window, qtbot, monkeypatch, tmp_path
):
    asked: list[str] = []
    answers = iter([tmp_path / "first.json", tmp_path / "second.json", tmp_path / "third.json"])

    def ask(*_args, **_kwargs):
        path = next(answers)
        asked.append(path.name)
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", ask)
    first = run_to_end(qtbot, window)
    window.saveJsonAction.trigger()  # Save with no file yet: asks, as Save As does
    assert asked == ["first.json"]
    assert window.result_path == tmp_path / "first.json"
    (tmp_path / "first.json").write_text("overwritten by Save")
    window.saveJsonAction.trigger()  # the result has a file now: Save writes it, no question
    assert asked == ["first.json"]
    assert json.loads((tmp_path / "first.json").read_text()) == json.loads(first.to_json())
    window.saveAsAction.trigger()  # Save As always asks, and the copy becomes the file
    assert asked == ["first.json", "second.json"]
    assert window.result_path == tmp_path / "second.json"

    second = run_to_end(qtbot, window)  # a new result has no file yet
    assert window.result_path is None
    window.saveJsonAction.trigger()
    assert asked == ["first.json", "second.json", "third.json"]
    assert json.loads((tmp_path / "third.json").read_text()) == json.loads(second.to_json())

    assert window.open_result(tmp_path / "first.json")  # an opened result's file is its own
    assert window.result_path == tmp_path / "first.json"
    assert window.saveCsvAction.text().replace("&", "") == "Export latency CSV…"
    assert "CSV" not in window.saveAsAction.text() and "CSV" not in window.saveJsonAction.text()


def test_export_report_of_a_failed_autocast_forward_and_of_another_family(
    window, qtbot, monkeypatch, tmp_path
):
    """File › Export report… writes what `run --report` writes: a failed autocast forward is
    the report's finding, and a non-MLP family gets its reproduce.py."""
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.engine import run_experiment
    from tests.autocast_failure import MESSAGE, failing_result

    failed = failing_result(monkeypatch)
    window.show_result(failed)
    assert window.exportReportAction.isEnabled()
    markdown = window.reportExporter.export_to(tmp_path / "finding")
    assert markdown is not None and not window.messageBanner.isVisible()
    text = markdown.read_text()
    assert "## Finding: bfloat16 autocast could not run this model here" in text
    assert MESSAGE in text
    latency = colors_in(tmp_path / "finding" / "latency.png")
    assert style.dtype_color("float32") in latency
    assert style.dtype_color("bfloat16") not in latency

    cnn = run_experiment(
        ExperimentConfig(model="cnn", channels=(3, 8), image=4, batch=2, min_time=0.02)
    )
    window.show_result(cnn)
    markdown = window.reportExporter.export_to(tmp_path / "cnn")
    assert markdown is not None and not window.messageBanner.isVisible()
    assert "| model | CNN |" in markdown.read_text()
    script = (tmp_path / "cnn" / "reproduce.py").read_text()
    assert "def cnn_model(config: Mapping[str, Any])" in script and '"model": "cnn"' in script
