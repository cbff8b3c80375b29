"""The window never states a speedup from a "too noisy" run: headline, status bar, lessons; the
interval is drawn wherever the speedup is (latency title, sweep chart, compare chart)."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QLabel

from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.testing import run_and_wait
from tests.edits import edited, retimed


def with_interval(result, speedup: float, low: float, high: float):
    auto = edited(result.autocast, median_ms=result.plain.median_ms / speedup)
    evidence = TimingEvidence(
        interval=SpeedupInterval(low=low, high=high, level=0.95, pairs=24), stopped="max_time"
    )
    return retimed(result, autocast=auto, evidence=evidence)


@pytest.fixture
def measured(window, tiny_config):
    return run_and_wait(window, tiny_config)


def test_a_too_noisy_result_has_no_figure_in_the_headline_or_status_bar(window, measured):
    noisy = with_interval(measured, 146.92, 0.4, 160.0)
    window.show_result(noisy)
    status = window.verdictLabel.text()
    assert status.startswith("too noisy to tell whether autocast was faster")
    assert "146.92" not in status
    headline = window.findChild(QLabel, "headlineLabel").text()
    assert headline.startswith("Too noisy to tell whether autocast was faster")
    assert "146.92" not in headline
    drawn = window.latencyPlot.drawn()
    assert drawn["speedup_text"] == "too noisy to tell: these bars are not a result"
    assert drawn["hatched"] == [True, True]


def test_a_clear_result_states_its_interval(window, measured):
    faster = with_interval(measured, 1.72, 1.66, 1.79)
    window.show_result(faster)
    assert window.verdictLabel.text().startswith("autocast was 1.72× faster here (95%: 1.66–1.79)")
    assert window.latencyPlot.drawn()["speedup_text"] == (
        "autocast 1.72× faster (typical paired ratio, 95%: 1.66–1.79)"
    )


def test_the_sweep_chart_draws_only_95_percent_intervals_and_no_untold_figure(window, timing_noise):
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.runner import run_sweep

    timing_noise.clear(1.5)
    config = ExperimentConfig(widths=(32, 16, 4), batch=4, min_time=0.02)
    sweep = run_sweep(config, "batch", [1, 8, 64], probe_onednn=False)
    # 4 pairs: covers 87.5%, not shown
    few = SpeedupInterval(low=1.3, high=1.6, level=0.875, pairs=4, estimate=1.45)
    wide = SpeedupInterval(low=0.5, high=3.0, level=0.95, pairs=24, estimate=1.45)  # too noisy
    firm = SpeedupInterval(low=1.45, high=1.55, level=0.95, pairs=24, estimate=1.5)
    points = [
        retimed(sweep.points[0], evidence=TimingEvidence(interval=firm, stopped="precise")),
        retimed(sweep.points[1], evidence=TimingEvidence(interval=few, stopped="max_time")),
        retimed(sweep.points[2], evidence=TimingEvidence(interval=wide, stopped="max_time")),
    ]
    points[1] = retimed(
        points[1], autocast=edited(points[1].autocast, median_ms=points[1].plain.median_ms / 1.45)
    )
    chart = window.findChild(pg.PlotWidget, "speedupPlot")
    chart.begin("batch", [1, 8, 64])
    chart.show_points(points)
    drawn = chart.drawn()
    assert [round(v) for v, _lo, _hi in drawn["intervals"]] == [1]  # the 95% one only
    assert [round(v) for v in drawn["values"]] == [1, 8]  # 64 could not tell: no point
    assert drawn["untold"] == [64.0]
    assert "whiskers: 95% interval" in drawn["title"] and "○ could not tell" in drawn["title"]


def test_a_sweep_whose_points_all_could_not_tell_says_so_not_measuring(window, timing_noise):
    """A finished sweep of too-noisy points still read "measuring…" over its hollow marks."""
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.runner import run_sweep
    from autocast_explorer.gui.charts.speedup_chart import NONE_TOLD

    timing_noise.clear(1.5)
    config = ExperimentConfig(widths=(32, 16, 4), batch=4, min_time=0.02)
    sweep = run_sweep(config, "batch", [1, 8], probe_onednn=False)
    wide = SpeedupInterval(low=0.5, high=3.0, level=0.95, pairs=24, estimate=1.45)
    noisy = [
        retimed(p, evidence=TimingEvidence(interval=wide, stopped="max_time")) for p in sweep.points
    ]
    chart = window.findChild(pg.PlotWidget, "speedupPlot")
    chart.begin("batch", [1, 8])
    assert chart._hint.toPlainText() == "measuring…"
    chart.show_points(noisy)
    assert chart.drawn()["untold"] == [1.0, 8.0] and chart.drawn()["values"] == []
    assert chart._hint.toPlainText() == NONE_TOLD
    chart.show_points([sweep.points[0], noisy[1]])  # one point that tells: no hint
    assert chart.drawn()["values"] == [1.0]
    assert chart._hint.toPlainText() == ""


def test_the_sweep_chart_draws_each_point_s_interval(window):
    chart = window.findChild(pg.PlotWidget, "speedupPlot")
    chart.begin("batch", [1, 8, 64])
    chart.show_series("batch", [1, 8, 64], [0.8, 1.1, 1.6], [(0.7, 0.9), None, (1.5, 1.7)])
    drawn = chart.drawn()
    assert [(round(v), lo, hi) for v, lo, hi in drawn["intervals"]] == [
        (1, pytest.approx(0.7), pytest.approx(0.9)),
        (64, pytest.approx(1.5), pytest.approx(1.7)),
    ]
    assert "whiskers: 95% interval" in drawn["title"]


def test_the_compare_chart_draws_each_run_s_interval_and_clears(qtbot, measured):
    from autocast_explorer.core.learning.compare import ComparedRun, Comparison
    from autocast_explorer.gui.charts.compare_charts import CompareSpeedupChart

    chart = CompareSpeedupChart()
    qtbot.addWidget(chart)
    chart.show()
    runs = (
        ComparedRun("a", "a.json", with_interval(measured, 1.72, 1.66, 1.79)),
        ComparedRun("b", "b.json", retimed(measured, evidence=None)),
        ComparedRun("c", "c.json", with_interval(measured, 1.7, 0.5, 3.1)),
    )
    chart.show_comparison(Comparison(runs))
    drawn = chart.drawn()
    # A run too noisy to tell: no bar, no whisker, no figure; its label says why.
    assert [(x, round(lo, 2), round(hi, 2)) for x, lo, hi in drawn["intervals"]] == [
        (0.0, 1.66, 1.79),
    ]
    assert drawn["speedups"][2] == 0.0
    assert drawn["value_labels"][2] == "too noisy to tell"
    chart.clear()
    chart.repaint()  # the emptied whiskers must paint (no stale ends of another length)
    assert chart.drawn()["intervals"] == []


def test_compare_hatches_the_bars_of_runs_that_could_not_tell(measured, qtbot):
    """As the Overview does: a too noisy or can't-tell run's medians are hatched, with why in
    the tooltip, and its speedup has no bar and no figure."""
    from autocast_explorer.core.learning.compare import ComparedRun, Comparison
    from autocast_explorer.gui.charts.compare_charts import (
        CompareLatencyChart,
        CompareSpeedupChart,
    )

    runs = (
        ComparedRun("firm", "a.json", with_interval(measured, 1.72, 1.66, 1.79)),
        ComparedRun("noisy", "b.json", with_interval(measured, 1.7, 0.5, 3.1)),
        ComparedRun("unclear", "c.json", with_interval(measured, 1.06, 1.02, 1.10)),
    )
    assert [r.result.speed_call.kind for r in runs] == ["faster", "noisy", "unclear"]
    latency, speedup = CompareLatencyChart(), CompareSpeedupChart()
    qtbot.addWidget(latency)
    qtbot.addWidget(speedup)
    for chart in (latency, speedup):
        chart.show_comparison(Comparison(runs))
    assert latency.drawn()["hatched"] == [False, False, True, True, True, True]
    tip = latency.toolTip()
    noisy = "; ".join(runs[1].result.speed_call.reasons)
    assert f"Hatched: noisy was too noisy to tell ({noisy}), so the bars are not a result." in tip
    assert "Hatched: unclear could not tell which mode was faster (the interval spans" in tip
    assert "firm" not in tip
    assert speedup.drawn()["value_labels"] == ["1.72×", "too noisy to tell", "can't tell"]
    assert "No bar for noisy: it was too noisy to tell" in speedup.toolTip()
    latency.clear()
    assert "Hatched" not in latency.toolTip()


def test_the_routes_chart_hatches_a_route_that_could_not_tell(window, timing_noise, qtbot):
    from autocast_explorer.core.experiment.routes import RouteResult
    from autocast_explorer.gui.features.routes.view import RoutesView

    timing_noise.clear(1.5)  # a quiet load reading: each route's own interval decides
    measured = run_and_wait(window)

    def route(name: str, low: float, high: float) -> RouteResult:
        return RouteResult(
            name=name,
            lower_dtype="bfloat16",
            plain=measured.plain,
            lower=edited(measured.autocast, median_ms=measured.plain.median_ms / 1.5),
            interval=SpeedupInterval(low=low, high=high, level=0.95, pairs=24, estimate=1.5),
        )

    routes = (route("eager", 1.45, 1.55), route("implicit", 0.5, 4.0))
    result = edited(measured, routes=routes)
    assert [result.route_call(r).kind for r in routes] == ["faster", "noisy"]
    view = RoutesView()
    qtbot.addWidget(view)
    view.show_result(result)
    assert view.latencyChart.drawn()["hatched"] == [False, False, True, True]
    why = "; ".join(result.route_call(routes[1]).reasons)
    assert f"Hatched: the implicit route was too noisy to tell ({why})" in (
        view.latencyChart.toolTip()
    )
    assert "eager route" not in view.latencyChart.toolTip()
    view.clear()
    assert view.latencyChart.drawn()["hatched"] == []
    assert "Hatched" not in view.latencyChart.toolTip()


def test_the_overview_hatches_a_run_that_can_t_tell_too(window, measured):
    unclear = with_interval(measured, 1.06, 1.02, 1.10)
    assert unclear.speed_call.kind == "unclear"
    window.show_result(unclear)
    drawn = window.latencyPlot.drawn()
    assert drawn["hatched"] == [True, True]
    assert drawn["speedup_text"] == "can't tell which was faster"
    assert "Hatched: this run could not tell which mode was faster (the interval spans" in (
        window.latencyPlot.toolTip()
    )
