"""The window's Training mode: mode selector, live loss curves, memory view, dtype tables."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QComboBox, QTableWidget, QWidget

from autocast_explorer.gui.shell import style
from tests.gui.helpers import RUN_TIMEOUT_MS, TINY, run_to_end

TRAIN = TINY.replace(mode="train", steps=12, threads=1)


def pixel(plot: pg.PlotWidget, x: float, y: float) -> str:
    view = plot.getPlotItem().getViewBox()
    point = plot.mapFromScene(view.mapViewToScene(QPointF(x, y)))
    image = plot.grab().toImage()
    ratio = image.devicePixelRatio()
    return image.pixelColor(round(point.x() * ratio), round(point.y() * ratio)).name()


def test_mode_selector_offers_inference_and_training(window):
    combo = window.findChild(QComboBox, "modeCombo")
    assert [combo.itemText(i) for i in range(combo.count())] == ["Inference", "Training"]
    assert window.current_config().mode == "infer"
    assert not window.controls.stepsSpin.isEnabled()
    combo.setCurrentIndex(1)
    assert window.current_config().mode == "train"
    assert window.controls.stepsSpin.isEnabled() and window.controls.lrSpin.isEnabled()
    window.controls.optimizerCombo.setCurrentText("adamw")
    assert window.current_config().lr == 0.001  # AdamW's usual step size
    window.set_config(TRAIN.replace(optimizer="adamw", lr=0.02, scaler=False, steps=7))
    config = window.current_config()
    assert (config.mode, config.optimizer, config.lr, config.scaler, config.steps) == (
        "train",
        "adamw",
        0.02,
        False,
        7,
    )


def test_training_run_draws_both_curves_live_and_the_measured_figures(window, qtbot):
    legend = window.findChild(pg.PlotWidget, "lossPlot").getPlotItem().legend
    assert not legend.isVisible()  # no curves yet: only the hint, which it would cover
    window.set_config(TRAIN)
    steps_seen = []
    window.experimentStep.connect(steps_seen.append)
    result = run_to_end(qtbot, window)
    train = result.train
    assert [s.step for s in steps_seen] == list(range(1, 13))  # streamed, one per step
    assert steps_seen[-1].loss_plain == train.loss["plain"][-1]
    view = window.findChild(QWidget, "trainingView")
    assert window.resultTabs.currentWidget() is view
    loss_plot = window.findChild(pg.PlotWidget, "lossPlot")
    drawn = loss_plot.drawn()
    assert drawn["plain"] == ([float(i) for i in range(1, 13)], list(train.loss["plain"]))
    assert drawn["autocast"][1] == list(train.loss["autocast"])
    assert drawn["legend"] == ["float32", "autocast (bfloat16)"] and legend.isVisible()
    assert f"{train.accuracy['plain']:.1%}" in drawn["accuracy_text"]
    # The float32 curve's pixel at step 1 is the float32 colour.
    assert pixel(loss_plot, 1.0, train.loss["plain"][0]) in {
        style.dtype_color("float32"),
        style.dtype_color("bfloat16"),  # the dashed autocast curve lies on top at step 1
    }
    saved = window.findChild(pg.PlotWidget, "savedBytesPlot").drawn()
    assert saved["bytes"] == [train.saved_bytes["plain"], train.saved_bytes["autocast"]]
    assert saved["heights_mb"][1] < saved["heights_mb"][0]
    table = window.findChild(QTableWidget, "gradDtypeTable")
    rows = {
        table.item(r, 0).text(): (table.item(r, 1).text(), table.item(r, 2).text())
        for r in range(table.rowCount())
    }
    assert rows == {name: ("float32", dtype) for name, dtype in train.grad_dtypes.items()}
    layers = window.findChild(QTableWidget, "trainLayerTable")
    assert layers.rowCount() == len(train.layers)
    assert layers.item(0, 3).text() == "float32 → bfloat16"
    summary = window.findChild(QWidget, "trainingSummary").text()
    assert "gradient dtypes under autocast: float32" in summary
    # The Overview's latency chart times training steps here, and says so.
    latency = window.latencyPlot
    assert latency.drawn()["title"].startswith("<b>Latency per training step</b>")
    assert latency.getPlotItem().getAxis("left").labelText == "ms per training step"


def test_an_inference_run_clears_the_training_view(window, qtbot):
    window.set_config(TRAIN.replace(steps=3))
    run_to_end(qtbot, window)
    assert window.lossPlot.has_data()
    window.set_config(TINY)
    run_to_end(qtbot, window)
    assert not window.lossPlot.has_data()
    assert window.latencyPlot.drawn()["title"].startswith("<b>Latency per forward</b>")
    assert window.savedBytesPlot.drawn()["bytes"] == []


def test_cancel_stops_training_between_steps_then_runs_again(window, qtbot):
    window.set_config(TRAIN.replace(steps=100_000, min_time=0.02))
    with qtbot.waitSignal(window.experimentStarted, timeout=5000):
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.lossPlot.drawn()["plain"][0]) >= 3, timeout=RUN_TIMEOUT_MS)
    with (
        qtbot.assertNotEmitted(window.experimentFinished),
        qtbot.waitSignal(window.experimentCancelled, timeout=RUN_TIMEOUT_MS),
    ):
        qtbot.mouseClick(window.cancelButton, Qt.MouseButton.LeftButton)
    assert window.runButton.isEnabled()
    window.set_config(TRAIN.replace(steps=3))
    assert run_to_end(qtbot, window).train.steps == 3


def test_a_long_stream_of_steps_is_drawn_whole_with_few_redraws(qtbot, monkeypatch):
    """Each step lands in the arrays; redraws are throttled (not one full redraw per step), and
    whatever arrived since the last redraw is drawn when asked (drawn() flushes first)."""
    from autocast_explorer.core.experiment.training import StepProgress
    from autocast_explorer.gui.charts import loss_chart
    from autocast_explorer.gui.charts.loss_chart import LossChart

    chart = LossChart()
    qtbot.addWidget(chart)
    clock = [100.0]
    monkeypatch.setattr(loss_chart.time, "monotonic", lambda: clock[0])
    redraws = []
    original = chart._redraw
    monkeypatch.setattr(chart, "_redraw", lambda: (redraws.append(1), original()))
    steps = 2000
    chart.start(steps, "bfloat16")
    for step in range(1, steps + 1):
        clock[0] += 0.001  # a step per millisecond: 20 steps per redraw interval
        loss = float("nan") if step == 7 else 1.0 / step
        chart.add_step(StepProgress(step, steps, loss, 2.0 / step))
    assert 40 <= len(redraws) <= 42  # one per 50 ms of the 2 s, and the last step
    drawn = chart.drawn()
    assert drawn["plain"][0] == [float(s) for s in range(1, steps + 1)]
    assert drawn["autocast"][1][-1] == 2.0 / steps
    assert chart.getPlotItem().getViewBox().viewRange()[1][1] == 2.0 * 1.08  # NaN ignored
    chart.start(10, "bfloat16")
    clock[0] += 1.0
    chart.add_step(StepProgress(1, 10, 0.5, 0.5))  # drawn at once: the interval has passed
    chart.add_step(StepProgress(2, 10, 0.4, 0.4))  # held back: within the interval
    held = chart._plain.getData()[0]
    assert list(held) == [1.0]
    chart.flush()
    assert list(chart._plain.getData()[0]) == [1.0, 2.0]


def test_a_far_slower_autocast_never_reads_speedup_zero(window, qtbot):
    """A ratio below 0.01 keeps two significant digits instead of printing 0.00×."""
    from autocast_explorer.core.experiment.certainty import TimingEvidence
    from autocast_explorer.core.experiment.interval import SpeedupInterval
    from tests.edits import edited, retimed

    result = run_to_end(qtbot, window)
    slow = edited(result.autocast, median_ms=result.plain.median_ms * 400)
    # A clean measurement of that ratio (this machine's own load must not make it "too noisy").
    clean = TimingEvidence(
        interval=SpeedupInterval(low=0.0024, high=0.0026, level=0.95, pairs=30), blocks=60
    )
    window.show_result(retimed(result, autocast=slow, evidence=clean))
    text = window.latencyPlot.drawn()["speedup_text"]
    assert text == "autocast 400.00× slower (typical paired ratio, 95%: 384.62–416.67)"
