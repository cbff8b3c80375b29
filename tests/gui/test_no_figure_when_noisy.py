"""A run too noisy to tell states no speedup anywhere the window shows it: every label, text
box, table cell, plot title and text, tooltip, the status bar, the Hardware tab, the report
and the Compare window. The run is live, its timing scripted by the tester's kit
(`timing_noise`), so the machine's own load cannot change what is asserted."""

from __future__ import annotations

import math
import re

import pyqtgraph as pg
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QLabel,
    QTableWidget,
    QTextEdit,
    QWidget,
)

from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.testing import run_and_wait
from tests.edits import edited, retimed

#: A figure no other number on screen has: speedup 7.3141, i.e. 0.13672 as a slowdown.
FIGURE = 7.3141
FIGURE_TEXTS = ("7.31", "7.3×", "7×", "0.137", "0.14×")


def shown_texts(root: QWidget) -> dict[str, str]:
    """Every text a widget under `root` shows or shows on hover, keyed by where it is."""
    texts: dict[str, str] = {}
    for widget in [root, *root.findChildren(QWidget)]:
        where = f"{type(widget).__name__}:{widget.objectName()}"
        texts[f"{where}.tooltip"] = widget.toolTip()
        if isinstance(widget, QLabel | QAbstractButton):
            texts[f"{where}.text"] = widget.text()
        if isinstance(widget, QTextEdit):
            texts[f"{where}.text"] = widget.toPlainText()
        if isinstance(widget, QTableWidget):
            for row in range(widget.rowCount()):
                for column in range(widget.columnCount()):
                    item = widget.item(row, column)
                    if item is not None:
                        texts[f"{where}[{row},{column}]"] = f"{item.text()} | {item.toolTip()}"
        if isinstance(widget, pg.PlotWidget):
            plot = widget.getPlotItem()
            texts[f"{where}.title"] = plot.titleLabel.text
            for i, item in enumerate(plot.items):
                if isinstance(item, pg.TextItem):
                    texts[f"{where}.item{i}"] = item.toPlainText()
    return texts


#: A figure as a number of its own: "7×" is not the end of "1.7×" or "170.77×" (the guard's
#: ratios, whatever this machine measured).
FIGURE_PATTERN = re.compile("|".join(rf"(?<![\d.]){re.escape(f)}(?!\d)" for f in FIGURE_TEXTS))


def with_figures(texts: dict[str, str]) -> dict[str, str]:
    return {where: t for where, t in texts.items() if FIGURE_PATTERN.search(t)}


def noisy_copy(result):
    """`result` with a paired figure of 7.3141 whose interval is far too wide to tell."""
    auto = edited(result.autocast, median_ms=result.plain.median_ms / FIGURE)
    band = SpeedupInterval(low=0.5, high=60.0, level=0.95, pairs=24, estimate=FIGURE)
    evidence = TimingEvidence(interval=band, stopped="max_time", target=0.05)
    return retimed(result, autocast=auto, evidence=evidence)


def test_a_too_noisy_run_shows_no_figure_anywhere(window, timing_noise, tmp_path):
    timing_noise.noisy()
    live = run_and_wait(window)
    assert live.speed_call.kind == "noisy"  # the kit made it so, on any machine
    noisy = noisy_copy(live)
    assert noisy.speed_call.kind == "noisy"
    window.show_result(noisy)
    hardware = window.findChild(QWidget, "hardwareTab")
    assert hardware.verdict.measured == "in a single run, too noisy to tell"
    assert with_figures(shown_texts(window)) == {}
    # The same walk finds the figure where it may be stated (a firm interval): it looks.
    firm_band = SpeedupInterval(low=7.0, high=7.6, level=0.95, pairs=24, estimate=FIGURE)
    firm = retimed(noisy, evidence=TimingEvidence(interval=firm_band, stopped="precise"))
    window.show_result(firm)
    found = with_figures(shown_texts(window))
    names = {where.split(":")[1].split(".")[0] for where in found}
    assert {"verdictLabel", "headlineLabel", "latencyPlot", "hardwareVerdictLabel"} <= names
    window.show_result(noisy)
    # The bars are drawn as what they are: hatched measurements, with why in the tooltip.
    drawn = window.latencyPlot.drawn()
    assert drawn["hatched"] == [True, True] and drawn["unreliable"]
    assert "Hatched: this run was too noisy to tell" in window.latencyPlot.toolTip()
    assert drawn["speedup_text"] == "too noisy to tell: these bars are not a result"
    assert window.verdictLabel.text().startswith("too noisy to tell whether autocast was faster")
    # The report and the Compare window say the same: no figure.
    assert window.save_result(tmp_path / "noisy.json")
    report = window.export_report(tmp_path / "report").read_text(encoding="utf-8")
    assert "Speedup: none stated, too noisy to tell (see the verdict)." in report
    assert not any(f in report for f in FIGURE_TEXTS)
    window.compare_files([tmp_path / "noisy.json"])
    compare = window.compare_window
    assert with_figures(shown_texts(compare)) == {}
    # The window's own run and its saved file are one run: listed once, the repeat named.
    assert compare.speedupChart.drawn()["value_labels"] == ["too noisy to tell"]
    assert "Compared already (the same run): noisy.json" in compare.message.text()


def test_a_clear_run_names_its_figure_beside_the_medians(window, timing_noise):
    timing_noise.clear(0.5)  # autocast's blocks take twice float32's
    result = run_and_wait(window)
    call = result.speed_call
    assert (call.kind, call.rough) == ("slower", "")
    drawn = window.latencyPlot.drawn()
    assert drawn["heights"] == [result.plain.median_ms, result.autocast.median_ms]
    assert drawn["hatched"] == [False, False] and drawn["unreliable"] == ""
    # The bars are medians (the axis says so), the figure the typical paired ratio (the
    # title says so), each named where it is shown.
    assert "bar: median" in window.latencyPlot.getPlotItem().getAxis("bottom").labelText
    assert drawn["speedup_text"] == (
        f"autocast {1 / result.speedup:.2f}× slower (typical paired ratio, "
        f"{result.evidence.interval.slower_text()})"
    )
    assert "not the ratio of the two bars" in window.latencyPlot.toolTip()


def test_a_busy_run_with_a_clear_direction_keeps_its_bars_and_marks_its_factor(
    window, timing_noise
):
    timing_noise.busy(0.1)  # other programs on every core
    result = run_and_wait(window, window.current_config().replace(min_time=0.1, threads=1))
    assert (result.speed_call.kind, result.speed_call.rough) == ("slower", "the machine was busy")
    assert window.verdictLabel.text().startswith(
        "autocast was slower here — about 10× (the machine was busy, so the factor is uncertain)"
    )
    drawn = window.latencyPlot.drawn()
    assert drawn["hatched"] == [False, False]
    assert drawn["speedup_text"] == (
        "autocast about 10× slower (typical paired ratio; the machine was busy)"
    )
    assert re.search(r"95%", drawn["speedup_text"]) is None  # no interval for a rough factor


def test_cpu_facts_come_only_from_a_run_that_could_tell(window, timing_noise):
    hardware = window.findChild(QWidget, "hardwareTab")
    timing_noise.noisy()
    first = run_and_wait(window)
    assert first.speed_call.too_noisy
    # No run could tell yet: no GFLOP/s, no roofline point, and the tab says why.
    assert "no GFLOP/s: it was too noisy to tell, and no earlier run could tell" in (
        hardware.basisLabel.text()
    )
    assert hardware.rooflinePlot.drawn()["plain"] == []
    # ... and the empty roofline says why, not "No measured points yet".
    assert hardware.rooflinePlot.drawn()["hint"] == (
        "No point to place: no run could tell which mode was faster"
    )
    assert "GFLOP/s" not in hardware.verdict.sentence
    timing_noise.clear(0.5)
    clear = run_and_wait(window)
    assert not clear.speed_call.too_noisy
    assert [g for _i, g in hardware.rooflinePlot.drawn()["plain"]] == [clear.gflops("plain")]
    assert hardware.rooflinePlot.drawn()["hint"] == ""
    # A later noisy run keeps the clear run's rates, and the tab names the run they are from.
    noisy = edited(noisy_copy(clear), config=clear.config.replace(batch=16))
    window.show_result(noisy)
    assert hardware.verdict.measured == "in a single run, too noisy to tell"
    assert "the GFLOP/s are from the run finished" in hardware.basisLabel.text()
    assert f"(batch {clear.config.batch}, " in hardware.basisLabel.text()
    assert [g for _i, g in hardware.rooflinePlot.drawn()["plain"]] == [clear.gflops("plain")]
    if hardware.verdict.instead:  # where the dtype is not native: the clear run's rates
        assert f"{clear.gflops('plain'):,.1f} GFLOP/s in float32" in hardware.verdict.instead


def test_a_sweep_too_noisy_at_every_point_places_nothing_and_says_so(window, timing_noise):
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.runner import run_sweep

    hardware = window.findChild(QWidget, "hardwareTab")
    timing_noise.noisy()
    config = ExperimentConfig(widths=(32, 16, 4), batch=4, min_time=0.02)
    sweep = run_sweep(config, "batch", [1, 8], probe_onednn=False)
    assert all(p.call.too_noisy for p in sweep.points)
    hardware.show_sweep(sweep)
    roof = hardware.rooflinePlot.drawn()
    assert roof["plain"] == [] and roof["autocast"] == []
    assert roof["hint"] == "No point to place: all 2 of the sweep's were too noisy to tell"
    assert "latest sweep: every point too noisy to place" in roof["title"]
    # The reason stands clear of the peak lines (centred, a peak's dashed line crossed it).
    from PySide6.QtCore import QPointF

    window.resultTabs.setCurrentWidget(hardware)
    chart = hardware.rooflinePlot
    QApplication.processEvents()
    hint = chart._hint.sceneBoundingRect()
    view = chart.getPlotItem().getViewBox()
    assert view.sceneBoundingRect().contains(hint)
    for gflops, _label in roof["peaks"]:
        line_y = view.mapViewToScene(QPointF(0, math.log10(gflops))).y()
        assert not hint.top() <= line_y <= hint.bottom(), (gflops, hint)


def test_an_interval_under_95_percent_is_shown_nowhere_as_an_interval(window, timing_noise):
    """Two paired rounds cover the median only 50% of the time: the reasons say how far the
    rounds were apart, never "50% interval", in the status bar, behind Why? and in the JSON."""
    timing_noise.noisy()
    live = run_and_wait(window)
    two = SpeedupInterval(low=0.1, high=3.41, level=0.5, pairs=2, estimate=0.58)
    auto = edited(live.autocast, median_ms=live.plain.median_ms / 0.58)
    few = retimed(live, autocast=auto, evidence=TimingEvidence(interval=two, stopped="max_time"))
    call = few.speed_call
    assert call.kind == "noisy"
    said = "only 2 paired rounds, and they disagreed by a factor of 34 (more than 1.25)"
    assert call.reasons[0] == said
    window.show_result(few)
    texts = shown_texts(window)
    assert said in window.verdictLabel.text()
    assert said in window.findChild(QLabel, "verdictWhyLabel").text()
    levels = {level for t in texts.values() for level in re.findall(r"(\d+)% interval", t)}
    assert levels <= {"95"}, levels
    assert not [where for where, t in texts.items() if "50%" in t]
    # The document's verdict carries the same words the window shows.
    written = few.to_dict()["latency"]["verdict"]
    assert written["call"] == "too noisy" and written["reasons"] == list(call.reasons)
