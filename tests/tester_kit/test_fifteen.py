"""The fifteen tests a new tester writes first, written with the kit and the documented API only.

Nothing here reaches into the package's internals, replaces a function or stubs a dialog by
hand: fixtures come from autocast_explorer.testing (pytest11 plugin) and pytest-qt, and every
attribute, method, objectName and field used is in docs/testing.md. If one of these needs a
private name to pass, the contract has a gap.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWidget

from autocast_explorer.core.config import ExperimentConfig
from autocast_explorer.testing import RUN_TIMEOUT_MS, RunNotStarted, run_and_wait

CTRL = Qt.KeyboardModifier.ControlModifier


# ---- open ---------------------------------------------------------------------------------
def test_the_window_opens_ready_to_run(explorer):
    run = explorer.findChild(QPushButton, "runButton")
    assert explorer.isVisible() and explorer.engine_ready()
    assert run.isEnabled()
    assert not explorer.findChild(QPushButton, "cancelButton").isEnabled()
    assert explorer.last_result is None
    assert explorer.resultTabs.tabText(0) == "Overview"


# ---- run with a config --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_runs_linear_layers_in_the_chosen_dtype(explorer, tiny_config, dtype):
    config = tiny_config.replace(dtype=dtype)
    result = run_and_wait(explorer, config)
    assert result.config == config
    linear = [layer for layer in result.layers if layer.kind == "Linear"]
    assert [layer.autocast.out_dtype for layer in linear] == [dtype] * len(linear)
    assert [layer.plain.out_dtype for layer in linear] == ["float32"] * len(linear)
    data = result.to_dict()  # the JSON-shaped view, as File › Save writes it
    assert data["config"]["dtype"] == dtype
    assert data["latency"]["plain"]["median_ms"] == result.plain.median_ms


def test_clicking_run_emits_started_then_finished(explorer, tiny_config, qtbot):
    explorer.set_config(tiny_config)
    with qtbot.waitSignals(
        [explorer.experimentStarted, explorer.experimentFinished],
        order="strict",
        timeout=RUN_TIMEOUT_MS,
    ):
        qtbot.mouseClick(explorer.runButton, Qt.MouseButton.LeftButton)
    assert explorer.runButton.isEnabled()  # ready for the next run as soon as it is signalled
    assert not explorer.runner.is_running()


# ---- read the charts ----------------------------------------------------------------------
def test_the_latency_chart_draws_the_two_medians(explorer, tiny_config):
    result = run_and_wait(explorer, tiny_config)
    drawn = explorer.latencyPlot.drawn()
    assert drawn["heights"] == [result.plain.median_ms, result.autocast.median_ms]
    assert drawn["whisker_top"] == [result.plain.p75_ms, result.autocast.p75_ms]


def test_the_dtype_chart_has_one_cell_per_layer_and_mode(explorer, tiny_config):
    result = run_and_wait(explorer, tiny_config)
    cells = explorer.dtypePlot.cells()
    assert [(c.layer, c.mode, c.out_dtype) for c in cells] == [
        (layer.name, mode, getattr(layer, mode).out_dtype)
        for layer in result.layers
        for mode in ("plain", "autocast")
    ]
    first_linear = next(i for i, la in enumerate(result.layers) if la.kind == "Linear")
    hovered = explorer.dtypePlot.cell_at(first_linear, 0)  # x: layer index, y: 0 = autocast row
    assert hovered.layer == result.layers[first_linear].name
    assert "bfloat16" in hovered.tooltip


def test_the_agreement_histogram_counts_every_row(explorer, tiny_config):
    result = run_and_wait(explorer, tiny_config)
    drawn = explorer.agreementPlot.drawn()
    assert drawn["counts"] == list(result.agreement.histogram.counts)
    # |float32 − autocast| of every output value: batch rows × classes
    assert sum(drawn["counts"]) == tiny_config.batch * tiny_config.widths[-1]


# ---- refuse bad input ---------------------------------------------------------------------
def test_bad_widths_are_refused_inline_and_run_stays_off(explorer, qtbot):
    widths = explorer.findChild(QLineEdit, "widthsEdit")
    widths.clear()
    qtbot.keyClicks(widths, "32,-4,4")
    error = explorer.findChild(QLabel, "widthsError")
    assert error.isVisible() and error.text() == explorer.input_errors()["widths"]
    assert not explorer.runButton.isEnabled()
    with pytest.raises(RunNotStarted) as refused:
        run_and_wait(explorer)
    assert "widths" in refused.value.errors


# ---- cancel -------------------------------------------------------------------------------
def test_cancel_ends_the_run_with_experiment_cancelled(explorer, tiny_config, qtbot):
    explorer.set_config(tiny_config.replace(min_time=30.0))  # would take a minute
    with qtbot.waitSignal(explorer.experimentStarted):
        qtbot.mouseClick(explorer.runButton, Qt.MouseButton.LeftButton)
    assert explorer.cancelButton.isEnabled()
    with (
        qtbot.assertNotEmitted(explorer.experimentFinished, wait=0),
        qtbot.waitSignal(explorer.experimentCancelled, timeout=RUN_TIMEOUT_MS),
    ):
        qtbot.mouseClick(explorer.cancelButton, Qt.MouseButton.LeftButton)
    assert explorer.last_result is None
    assert explorer.runButton.isEnabled()


# ---- presets ------------------------------------------------------------------------------
def test_choosing_a_preset_sets_every_control(explorer, tiny_config):
    presets = explorer.presets
    explorer.set_config(tiny_config)  # matches no preset
    assert presets.chosen() is None
    assert presets.shown_text() == "Custom settings"
    tutorial = presets.choose("tutorial")
    assert explorer.current_config() == tutorial.config
    assert presets.chosen() == tutorial
    assert presets.shown_text() == tutorial.name
    explorer.batchSpin.setValue(tutorial.config.batch + 1)  # no longer the preset
    assert presets.chosen() is None


def test_a_saved_preset_is_listed_and_chosen(explorer, tiny_config, explorer_user_files):
    explorer.set_config(tiny_config)
    path = explorer.save_preset("Tiny net", "Three layers for quick checks.")
    assert path.parent == explorer_user_files.presets_dir
    saved = explorer.presets.chosen()
    assert (saved.name, saved.config, saved.sweep) == ("Tiny net", tiny_config, None)
    assert saved in explorer.presets.presets()
    assert json.loads(path.read_text())["config"] == tiny_config.to_dict()


# ---- lessons ------------------------------------------------------------------------------
def test_a_lesson_step_measures_and_explains(explorer, tiny_config, qtbot):
    panel = explorer.lessonsPanel
    explorer.set_config(tiny_config)  # steps keep the controls' timing budget
    panel.go_to(1)  # 0-based: the second lesson
    assert panel.step_index() == 1
    with qtbot.waitSignal(panel.stepFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        assert panel.run_step()
    outcome = blocker.args[0]
    assert outcome.lesson_id == panel.steps()[1]
    assert outcome == panel.outcome(outcome.lesson_id)
    assert panel.shown_text().startswith(outcome.headline)
    assert explorer.last_result.config.min_time == tiny_config.min_time


def test_the_exercise_is_graded_against_the_measurement(explorer, tiny_config, qtbot):
    result = run_and_wait(explorer, tiny_config.replace(dtype="float16"))
    panel = explorer.lessonsPanel
    panel.go_to(len(panel.steps()) - 1)  # the exercise is the last step
    linear = next(la for la in result.layers if la.kind == "Linear")
    panel.select_answer(linear.autocast.out_dtype)
    with qtbot.waitSignal(panel.exerciseGraded) as blocker:
        grade = panel.check_answer()
    assert blocker.args[0] == grade
    assert (grade.answer, grade.expected, grade.correct) == ("float16", "float16", True)


# ---- save and open ------------------------------------------------------------------------
def test_a_saved_result_opens_as_the_same_result(explorer, tiny_config, tmp_path):
    result = run_and_wait(explorer, tiny_config)
    path = tmp_path / "run.json"
    assert explorer.save_result(path)
    assert json.loads(path.read_text()) == json.loads(result.to_json())
    explorer.clear_results()
    assert explorer.latencyPlot.drawn()["heights"] == []
    assert explorer.open_result(path)
    assert explorer.last_result == result  # every field but `extras`
    assert explorer.latencyPlot.drawn()["heights"] == [
        result.plain.median_ms,
        result.autocast.median_ms,
    ]
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert not explorer.open_result(broken)
    assert str(broken) in explorer.messageBanner.text()
    assert explorer.last_result == result  # still showing the good one


# ---- compare ------------------------------------------------------------------------------
def test_comparing_two_runs_names_the_config_difference(explorer, tiny_config, tmp_path):
    compare = explorer.compare_window  # exists before Compare was ever opened
    difference = compare.findChild(QLabel, "compareConfigDifference")
    assert not compare.isVisible() and difference.isHidden()
    paths = []
    for batch in (8, 16):
        run_and_wait(explorer, tiny_config.replace(batch=batch))
        paths.append(tmp_path / f"batch{batch}.json")
        assert explorer.save_result(paths[-1])
    explorer.clear_results()  # compare just the two files
    assert explorer.compare_files(paths) == []
    assert compare.isVisible()
    assert [run.result.config.batch for run in compare.comparison().runs] == [8, 16]
    assert compare.config_differences() == ["batch"]
    assert difference.isVisible() and "batch" in difference.text()


# ---- presentation keys --------------------------------------------------------------------
def test_ctrl_plus_and_ctrl_zero_scale_the_text(explorer, qtbot):
    explorer.activateWindow()
    qtbot.waitUntil(explorer.isActiveWindow)
    qtbot.keyClick(explorer, Qt.Key.Key_Equal, CTRL)
    assert explorer.presentation.state().font_scale == 1.15
    qtbot.keyClick(explorer, Qt.Key.Key_0, CTRL)
    assert explorer.presentation.state().font_scale == 1.0
    qtbot.keyClick(explorer, Qt.Key.Key_C, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert explorer.presentation.state().controls_hidden
    assert not explorer.findChild(QWidget, "controlsPanel").isVisible()


# ---- close mid-run ------------------------------------------------------------------------
def test_closing_mid_run_cancels_and_leaves_no_thread(explorer, tiny_config, qtbot):
    explorer.set_config(tiny_config.replace(min_time=30.0))
    with qtbot.waitSignal(explorer.experimentStarted):
        assert explorer.start_experiment()
    with qtbot.assertNotEmitted(explorer.experimentFinished, wait=0):
        assert explorer.close()
    assert not explorer.runner.is_running()
    # the explorer fixture then fails this test if a QThread or QTimer is still running


def test_config_can_be_typed_or_set(explorer):
    explorer.set_config(ExperimentConfig(widths=(64, 32, 8), batch=4))
    assert explorer.findChild(QLineEdit, "widthsEdit").text() == "64,32,8"
    assert explorer.current_config().batch == 4
