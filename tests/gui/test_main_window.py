"""The window's contract: a run draws the result's own numbers; bad input never starts a run."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
import torch
from PySide6.QtCore import QPointF, Qt, qVersion
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QDialog,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QWidget,
)

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.summary import speed_title, verdict
from autocast_explorer.gui.features.experiment.controls import ControlsPanel
from autocast_explorer.gui.shell import style
from tests.gui.helpers import RUN_TIMEOUT_MS, TINY, answer_run_anyway, run_to_end


def pixel(plot: pg.PlotWidget, x: float, y: float) -> str:
    """The color drawn on screen at data coordinates (x, y) of `plot`."""
    view = plot.getPlotItem().getViewBox()
    point = plot.mapFromScene(view.mapViewToScene(QPointF(x, y)))
    image = plot.grab().toImage()
    ratio = image.devicePixelRatio()
    return image.pixelColor(round(point.x() * ratio), round(point.y() * ratio)).name()


def test_contract_object_names_and_title(window):
    expected = {
        "widthsEdit": QLineEdit,
        "batchSpin": QSpinBox,
        "runButton": QPushButton,
        "cancelButton": QPushButton,
        "progressBar": QProgressBar,
        "latencyPlot": pg.PlotWidget,
        "dtypePlot": pg.PlotWidget,
        "agreementPlot": pg.PlotWidget,
        "resultTabs": QTabWidget,
    }
    for name, cls in expected.items():
        found = window.findChild(QWidget, name)
        assert isinstance(found, cls), name
    assert window.windowTitle() == "Autocast Explorer"
    assert window.resultTabs.tabText(0) == "Overview"
    assert window.runButton.shortcut() == QKeySequence(Qt.Key.Key_F5)
    assert window.cancelButton.shortcut() == QKeySequence(Qt.Key.Key_Escape)


def test_run_draws_the_results_own_numbers(window, qtbot):
    seen_at_emit: list[tuple[bool, bool, bool]] = []
    window.experimentFinished.connect(
        lambda _r: seen_at_emit.append(
            (
                window.runButton.isEnabled(),
                window.cancelButton.isEnabled(),
                window.runner.is_running(),
            )
        )
    )
    with qtbot.waitSignal(window.experimentStarted, timeout=5000):
        result = run_to_end(qtbot, window)
    assert seen_at_emit == [(True, False, False)]  # ready for the next run when it is emitted
    assert window.last_result is result
    assert result.config == TINY

    latency = window.latencyPlot.drawn()
    assert latency["heights"] == pytest.approx([result.plain.median_ms, result.autocast.median_ms])
    assert latency["whisker_top"] == pytest.approx([result.plain.p75_ms, result.autocast.p75_ms])
    assert latency["whisker_bottom"] == pytest.approx([result.plain.p25_ms, result.autocast.p25_ms])
    assert latency["cold"] == pytest.approx([result.plain.cold_ms, result.autocast.cold_ms])
    assert latency["colors"] == [style.dtype_color("float32"), style.dtype_color("bfloat16")]
    assert latency["speedup_text"] == speed_title(result)[0]  # the run's own call
    assert latency["hatched"] == [not result.speed_call.graded] * 2  # could not tell
    assert latency["ticks"][1].startswith("autocast · bfloat16")

    cells = window.dtypePlot.cells()
    assert [(c.layer, c.mode) for c in cells] == [
        (layer.name, mode) for layer in result.layers for mode in ("plain", "autocast")
    ]
    for cell, layer in zip(cells[1::2], result.layers, strict=True):
        assert (cell.in_dtype, cell.out_dtype) == (
            layer.autocast.in_dtype,
            layer.autocast.out_dtype,
        )
    measured = [
        style.dtype_color(d.out_dtype)
        for layer in result.layers
        for d in (layer.plain, layer.autocast)
    ]
    assert window.dtypePlot.drawn_colors() == measured
    assert window.dtypePlot.legend_entries() == ["float32", "bfloat16"]
    fc1 = result.layers[0].autocast
    assert window.dtypePlot.cell_at(0, 0).tooltip == (
        f"fc1 (Linear), autocast: {fc1.in_dtype} → {fc1.out_dtype}\n"
        f"computed in: {fc1.compute.summary(fc1.out_dtype)}"
    )
    # Hovering that cell shows its tooltip on the widget; off the cells, the chart's own.
    view = window.dtypePlot.getPlotItem().getViewBox()
    window.dtypePlot._on_mouse_moved(view.mapViewToScene(QPointF(0, 0)))
    assert window.dtypePlot.toolTip() == window.dtypePlot.cell_at(0, 0).tooltip
    window.dtypePlot._on_mouse_moved(QPointF(-1e6, -1e6))
    assert window.dtypePlot.toolTip().startswith("The dtype")

    a = result.agreement
    agreement = window.agreementPlot.drawn()
    assert agreement["counts"] == list(a.histogram.counts)
    assert agreement["x0"] == pytest.approx(list(a.histogram.edges[:-1]))
    assert agreement["x1"] == pytest.approx(list(a.histogram.edges[1:]))
    assert f"{a.agree}/{a.rows} rows agree" in agreement["title"]
    assert f"allclose(atol {a.atol:g}): {'yes' if a.allclose else 'no'}" in agreement["title"]
    assert f"max |diff| {a.max_abs_diff:.3g}" in agreement["stats_text"]

    assert window.layerTable.rows()[0][:3] == ("fc1", "Linear", "8×16")
    assert window.layerTable.rows()[0][4] == "float32 → bfloat16"
    assert window.verdictLabel.text() == verdict(result)
    assert window.progressBar.value() == window.progressBar.maximum()


def test_the_charts_pixels_show_the_measured_dtypes(window, qtbot, timing_noise):
    timing_noise.clear(0.8)  # a clear call: solid bars (a too noisy run's are hatched)
    result = run_to_end(qtbot, window)
    qtbot.wait(50)  # let the views repaint
    plot = window.dtypePlot
    for column, layer in enumerate(result.layers):
        # Off-centre, so the in → out label over the cell's middle is not what is sampled.
        assert pixel(plot, column - 0.3, 1.28) == style.dtype_color(layer.plain.out_dtype)
        assert pixel(plot, column - 0.3, 0.28) == style.dtype_color(layer.autocast.out_dtype)
    # Bars: every pixel inside the bar's outline (1 px pen) has the dtype's color. On a noisy
    # machine p75 can dwarf the median; a bar under 3 px tall has no inside to sample.
    latency = window.latencyPlot
    image = latency.grab().toImage()
    ratio = image.devicePixelRatio()
    view = latency.getPlotItem().getViewBox()
    for x, stats, dtype in ((0.0, result.plain, "float32"), (1.0, result.autocast, "bfloat16")):
        left, top = _to_pixels(latency, view, x - 0.25, stats.median_ms, ratio)
        right, bottom = _to_pixels(latency, view, x - 0.11, 0.0, ratio)  # left of the beams
        rows = range(top + 2, bottom - 1)
        colors = {image.pixelColor(px, py).name() for px in range(left, right) for py in rows}
        assert colors <= {style.dtype_color(dtype)}, colors


def _to_pixels(plot, view, x: float, y: float, ratio: float) -> tuple[int, int]:
    point = plot.mapFromScene(view.mapViewToScene(QPointF(x, y)))
    return round(point.x() * ratio), round(point.y() * ratio)


def test_hovering_a_dtype_cell_gives_in_and_out(window, qtbot):
    result = run_to_end(qtbot, window)
    qtbot.wait(50)
    plot = window.dtypePlot
    view = plot.getPlotItem().getViewBox()
    point = plot.mapFromScene(view.mapViewToScene(QPointF(0, 0)))
    qtbot.mouseMove(plot.viewport(), point)
    qtbot.waitUntil(lambda: plot.toolTip().startswith("fc1"), timeout=5000)
    layer = result.layers[0]
    a = layer.autocast
    assert plot.toolTip() == (
        f"fc1 (Linear), autocast: {a.in_dtype} → {a.out_dtype}\n"
        f"computed in: {a.compute.summary(a.out_dtype)}"
    )


@pytest.mark.parametrize("text", ["256,abc,10", "256", "", "64,0,10", "64,,10"])
def test_bad_widths_are_shown_inline_and_never_start_a_run(window, qtbot, text):
    try:
        TINY.replace(widths=text)
    except ConfigError as exc:
        expected = exc.rule
    else:
        pytest.fail(f"{text!r} should be invalid")
    with qtbot.assertNotEmitted(window.experimentStarted, wait=100):
        window.widthsEdit.setText(text)
        assert window.input_errors() == {"widths": expected}
        assert window.findChild(QLabel, "widthsError").isVisible()
        assert not window.runButton.isEnabled()
        window.activateWindow()
        qtbot.keyClick(window, Qt.Key.Key_F5)
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
        assert window.start_experiment() is False
        assert not window.runner.is_running()
    with pytest.raises(ConfigError):
        window.current_config()
    window.widthsEdit.setText("32,16,4")
    assert window.input_errors() == {}
    assert window.runButton.isEnabled()
    assert not window.findChild(QLabel, "widthsError").isVisible()


def test_memory_guard_is_shown_inline_before_running(window, qtbot):
    window.controls.advancedButton.setChecked(True)
    window.widthsEdit.setText("1024,1024,10")
    config = window.current_config().replace(memory_budget_mb=1.0)
    with pytest.raises(ConfigError) as caught:
        guards.check_memory_before_running(config)  # the quick bound the window checks with
    window.set_config(config)
    assert window.input_errors() == {"guard": f"Too much memory: {caught.value.rule}"}
    assert not window.runButton.isEnabled()
    assert window.start_experiment() is False
    window.findChild(QAbstractSpinBox, "memoryBudgetSpin").setValue(0)  # auto
    assert window.input_errors() == {}
    assert window.runButton.isEnabled()


def test_time_guard_from_the_engine_blocks_that_config_until_it_changes(window, qtbot, monkeypatch):
    def too_slow(config, estimate=None):
        raise guards.GuardError("time", "one forward pass is estimated at 99.0 s (limit 10 s)")

    monkeypatch.setattr(guards, "check_time", too_slow)
    with qtbot.waitSignal(window.experimentFailed, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
    assert blocker.args == ["time: one forward pass is estimated at 99.0 s (limit 10 s)"]
    assert window.input_errors() == {
        "guard": "Too slow: one forward pass is estimated at 99.0 s (limit 10 s)"
    }
    assert not window.runButton.isEnabled()
    window.findChild(QAbstractButton, "allowSlowCheck").setChecked(True)
    assert window.input_errors() == {}
    assert window.runButton.isEnabled()


def test_cancel_then_run_again(window, qtbot):
    window.set_config(TINY.replace(min_time=60.0))
    answer_run_anyway(window)  # two minutes of timing: the run asks first
    with qtbot.waitSignal(window.experimentStarted, timeout=5000):
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
    # Wait until the ABAB timing loop runs, then cancel.
    label = window.controls.progressLabel
    qtbot.waitUntil(lambda: label.text().startswith("timing"), timeout=RUN_TIMEOUT_MS)
    assert not window.runButton.isEnabled()
    assert window.start_experiment() is False  # one run at a time
    with (
        qtbot.assertNotEmitted(window.experimentFinished),
        qtbot.waitSignal(window.experimentCancelled, timeout=RUN_TIMEOUT_MS),
    ):
        qtbot.mouseClick(window.cancelButton, Qt.MouseButton.LeftButton)
    assert window.runButton.isEnabled()
    assert not window.cancelButton.isEnabled()
    assert window.last_result is None
    window.set_config(TINY)
    result = run_to_end(qtbot, window)
    assert result.config == TINY


def test_engine_exception_is_reported_and_the_window_stays_usable(window, qtbot, monkeypatch):
    from autocast_explorer.core.experiment import engine

    def broken(config, progress=None, cancel=None, partial=None, confirm=None):
        raise RuntimeError("injected failure in the engine")

    monkeypatch.setattr(engine, "run_experiment", broken)
    with (
        qtbot.assertNotEmitted(window.experimentFinished),
        qtbot.waitSignal(window.experimentFailed, timeout=RUN_TIMEOUT_MS) as blocker,
    ):
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
    assert blocker.args == ["RuntimeError: injected failure in the engine"]
    assert window.messageBanner.isVisible()
    assert "injected failure in the engine" in window.messageBanner.text()
    assert window.runButton.isEnabled()
    monkeypatch.undo()
    result = run_to_end(qtbot, window)
    assert result.agreement.rows == TINY.batch
    assert not window.messageBanner.isVisible()


def test_set_config_and_current_config_round_trip(window):
    config = ExperimentConfig(
        widths=(64, 32, 8),
        batch=3,
        seed=7,
        dtype="float16",
        threads=1,
        activation="gelu",
        head="log_softmax",
        atol=0.1,
        rtol=1e-4,
        topk=3,
        input_scale=2.5,
        input_distribution="uniform",
        min_time=0.05,
        allow_slow=True,
        memory_budget_mb=512.0,
    )
    window.set_config(config)
    assert window.current_config() == config
    assert window.widthsEdit.text() == "64,32,8"
    assert window.batchSpin.value() == 3


def test_every_control_explains_itself(qtbot):
    panel = ControlsPanel()
    qtbot.addWidget(panel)
    inputs = panel.findChildren(QWidget)
    checked = [
        w
        for w in inputs
        if isinstance(w, QLineEdit | QAbstractSpinBox | QComboBox | QAbstractButton)
        and w.parent() is not None
        and not isinstance(w.parent(), QAbstractSpinBox | QComboBox | QLineEdit)  # Qt-internal
    ]
    assert len(checked) >= 16
    missing = [w.objectName() or type(w).__name__ for w in checked if not w.toolTip().strip()]
    assert missing == []


def test_about_shows_versions_and_cpu_capability(window, qtbot):
    window.aboutAction.trigger()
    dialog = window.findChild(QDialog, "aboutDialog")
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    text = dialog.findChild(QLabel, "aboutTable").text()
    assert torch.__version__ in text
    assert qVersion() in text
    assert pg.__version__ in text
    assert torch.backends.cpu.get_cpu_capability() in text
    dialog.close()


def test_f5_runs_and_esc_cancels(window, qtbot):
    window.set_config(TINY.replace(min_time=60.0))
    answer_run_anyway(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    with qtbot.waitSignal(window.experimentStarted, timeout=5000):
        qtbot.keyClick(window.widthsEdit, Qt.Key.Key_F5)  # from inside a text field
    label = window.controls.progressLabel
    qtbot.waitUntil(lambda: label.text().startswith("timing"), timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(window.experimentCancelled, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(window.widthsEdit, Qt.Key.Key_Escape)


def test_disabled_buttons_look_disabled(window):
    from PySide6.QtGui import QPalette

    from autocast_explorer.gui.window.app import create_application

    create_application([])  # the styled application, as run_app sets it up
    assert not window.cancelButton.isEnabled()
    palette = window.cancelButton.palette()
    role = QPalette.ColorRole.ButtonText
    disabled = palette.color(QPalette.ColorGroup.Disabled, role).name()
    active = palette.color(QPalette.ColorGroup.Active, role).name()
    assert disabled != active
