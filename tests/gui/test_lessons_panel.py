"""The Lessons panel: each step sets its config, runs live, and explains *that* measurement."""

from __future__ import annotations

import html

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QWidget

from autocast_explorer.core.learning.lessons import EXERCISE, LESSONS
from autocast_explorer.gui import MainWindow
from tests.gui.helpers import RUN_TIMEOUT_MS, TINY, run_to_end

CHART_WIDGETS = {
    "latency": "latencyPlot",
    "dtype": "dtypePlot",
    "agreement": "agreementPlot",
    "layers": "layerTable",
    "ops": "dtypePlot",  # no op-trace view in this window: the dtype chart answers instead
    "loss": "lossPlot",
    "accuracy": "flipBox",  # the Accuracy tab's flipped rows
    "sensitivity": "sensitivityChart",  # the Plan tab's chart
}


def show_lessons(window):
    window.lessonsAction.trigger()
    panel = window.findChild(QWidget, "lessonsPanel")
    assert window.findChild(QDockWidget, "lessonsDock").isVisible()
    assert panel.isVisible()
    return panel


@pytest.mark.slow
def test_stepping_through_every_lesson_explains_the_live_measurement(window, qtbot):
    panel = show_lessons(window)
    assert panel.steps() == [lesson.id for lesson in LESSONS] + ["exercise"]
    for index, lesson in enumerate(LESSONS):
        assert panel.step_index() == index
        assert panel.titleLabel.text() == html.escape(lesson.title)
        assert panel.explanationLabel.text() == html.escape(lesson.explanation)
        with qtbot.waitSignal(panel.stepFinished, timeout=RUN_TIMEOUT_MS) as blocker:
            qtbot.mouseClick(panel.runStepButton, Qt.MouseButton.LeftButton)
        outcome = blocker.args[0]

        # The step set the lesson's config, keeping the measurement budget of the controls.
        expected_config = lesson.config.replace(min_time=TINY.min_time)
        assert window.current_config() == expected_config
        run = panel.last_run
        assert run.result.config == expected_config
        assert window.last_result is run.result  # drawn in every view
        assert window.latencyPlot.drawn()["heights"] == pytest.approx(
            [run.result.plain.median_ms, run.result.autocast.median_ms]
        )
        assert (run.probe is not None) == lesson.uses_probe

        # The sentences shown are the lesson's check of *this* result.
        assert outcome == lesson.check(run.result, run.probe)
        assert panel.outcomeHeadline.text() == outcome.headline
        assert panel.outcomeSentences.text() == "\n".join(f"• {s}" for s in outcome.sentences)
        assert panel.runStepButton.isEnabled()

        # …and the chart that answers it is in front, framed.
        target = CHART_WIDGETS[lesson.chart]
        assert panel.highlighted_chart() == target
        assert window.resultTabs.currentWidget().isAncestorOf(window.findChild(QWidget, target))
        qtbot.mouseClick(panel.nextButton, Qt.MouseButton.LeftButton)

    assert panel.step_index() == len(LESSONS)  # the exercise
    assert panel.exerciseBox.isVisible()
    assert not panel.nextButton.isEnabled()


def test_lesson_sentences_carry_the_results_own_numbers(window, qtbot):
    panel = show_lessons(window)
    by_id = {lesson.id: i for i, lesson in enumerate(LESSONS)}

    panel.go_to(by_id["linear"])
    with qtbot.waitSignal(panel.stepFinished, timeout=RUN_TIMEOUT_MS):
        assert panel.run_step()
    run = panel.last_run
    linear_outs = {la.autocast.out_dtype for la in run.result.layers if la.kind == "Linear"}
    assert linear_outs == {"bfloat16"}  # what CPU autocast does to Linear layers
    assert run.probe.weight_dtypes == ("float32",)  # the stored weights stay float32
    assert "bfloat16" in panel.outcomeHeadline.text()
    assert "still float32" in panel.outcomeSentences.text()

    panel.go_to(by_id["timing"])
    with qtbot.waitSignal(panel.stepFinished, timeout=RUN_TIMEOUT_MS):
        assert panel.run_step()
    result = panel.last_run.result
    shown = panel.outcomeSentences.text()
    assert f"{result.plain.median_ms:.3g} ms in float32" in shown
    assert f"{result.autocast.median_ms:.3g} ms under autocast" in shown
    assert panel.highlighted_chart() == "latencyPlot"

    # Going back shows the earlier outcome again, with its chart.
    panel.go_to(by_id["linear"])
    assert panel.outcomeHeadline.text() == panel.outcome("linear").headline
    assert panel.highlighted_chart() == "dtypePlot"


def test_the_exercise_is_graded_against_the_measurement(window, qtbot):
    panel = show_lessons(window)
    panel.go_to(len(LESSONS))
    assert window.last_result is None
    assert [b.text() for b in panel.choiceGroup.buttons()] == list(EXERCISE.choices)

    # Nothing measured yet: checking measures first, then grades.
    panel.select_answer("bfloat16")
    with qtbot.waitSignal(panel.exerciseGraded, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.checkButton, Qt.MouseButton.LeftButton)
    grade = blocker.args[0]
    linears = [la for la in window.last_result.layers if la.kind == "Linear"]
    assert {la.autocast.out_dtype for la in linears} == {"bfloat16"}
    assert grade.correct and grade.expected == "bfloat16"
    assert panel.gradeLabel.text() == "✓ " + grade.explanation
    assert "fc1" in panel.gradeLabel.text()

    panel.select_answer("float32")
    grade = panel.check_answer()
    assert not grade.correct
    assert panel.gradeLabel.text().startswith("✗ Not quite: the measurement says bfloat16")

    # The key is the measurement, not a fixed answer: a float16 run makes float16 right.
    window.set_config(TINY.replace(dtype="float16"))
    run_to_end(qtbot, window)
    panel.select_answer("float16")
    assert panel.check_answer().correct
    panel.select_answer("bfloat16")
    assert not panel.check_answer().correct
    assert "the measurement says float16" in panel.gradeLabel.text()


def test_page_keys_step_and_ctrl_return_runs_while_the_panel_is_shown(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    panel = window.lessonsPanel
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert panel.step_index() == 0  # panel hidden: the keys are not the lessons'
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert window.lessonsDock.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert panel.step_index() == 2
    qtbot.keyClick(window, Qt.Key.Key_PageUp)
    assert panel.step_index() == 1
    with qtbot.waitSignal(panel.stepFinished, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert panel.last_run.lesson.id == LESSONS[1].id


def test_the_lessons_action_shows_the_dock_when_checked_or_triggered(window, qtbot):
    action, dock = window.lessonsAction, window.lessonsDock
    assert not action.isChecked() and not dock.isVisible()
    action.setChecked(True)  # as trigger() does, not only the menu entry's own signal
    qtbot.waitUntil(dock.isVisible, timeout=2000)
    action.setChecked(False)
    qtbot.waitUntil(lambda: not dock.isVisible(), timeout=2000)
    action.trigger()  # once: shown, not shown and hidden again
    assert dock.isVisible() and action.isChecked()
    dock.close()  # the dock's own close button: the entry follows
    assert not action.isChecked() and not dock.isVisible()


def test_ops_chart_brings_the_op_trace_tab_forward(window):
    panel = show_lessons(window)
    assert panel.show_chart("ops") == "ops"
    page = window.resultTabs.currentWidget()
    assert window.resultTabs.tabText(window.resultTabs.currentIndex()) == "Op trace"
    assert panel.highlighted_chart() == page.objectName()


def test_ops_chart_falls_back_to_the_dtype_chart_without_an_op_tab(window):
    panel = show_lessons(window)
    tabs = window.resultTabs
    for index in reversed(range(tabs.count())):
        if tabs.tabText(index).lower().startswith("op"):
            tabs.removeTab(index)
    assert panel.show_chart("ops") == "dtype"
    assert panel.highlighted_chart() == "dtypePlot"


def test_a_step_before_torch_is_loaded_says_so(qtbot):
    win = MainWindow(autoload=False)
    qtbot.addWidget(win)
    panel = win.lessonsPanel
    with qtbot.waitSignal(panel.stepFailed, timeout=1000) as blocker:
        assert not panel.run_step()
    assert "still loading" in blocker.args[0]
    assert panel.outcomeHeadline.text() == blocker.args[0]


def test_the_loss_chart_frame_is_no_pane_of_the_training_splitter(window, qtbot):
    """Lesson 6 frames the loss chart, which sits in a QSplitter: a frame parented there became
    an empty third pane and squeezed the loss chart."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtWidgets import QSplitter

    from tests.gui.helpers import TINY

    window.set_config(TINY.replace(mode="train", steps=4, threads=1))
    run_to_end(qtbot, window)
    loss = window.findChild(pg.PlotWidget, "lossPlot")
    splitter = loss.parentWidget()
    assert isinstance(splitter, QSplitter) and splitter.count() == 2
    before = splitter.sizes()
    panel = window.lessonsPanel
    assert panel.show_chart("loss") == "loss"
    qtbot.wait(50)
    assert panel.highlighted_chart() == "lossPlot"
    frame = panel.highlight
    assert splitter.count() == 2 and splitter.indexOf(frame) < 0
    assert not isinstance(frame.parentWidget(), QSplitter)
    assert splitter.sizes() == before  # the loss chart keeps its share
    assert frame.isVisible()
    # The frame surrounds the loss chart (in the frame's parent's coordinates).
    box = QRect(loss.mapTo(frame.parentWidget(), QPoint(0, 0)), loss.size())
    assert frame.geometry().contains(box)
    line = frame.BORDER  # its line stays off the chart, and its parent cuts none of it
    assert frame.geometry().adjusted(line, line, -line, -line).contains(box)
    assert frame.parentWidget().rect().contains(frame.geometry())


def test_the_exercise_question_wraps_inside_the_panel_at_150_percent(window, qtbot):
    """Its long code word wraps (zero-width spaces after '.' and '('): nothing cut at the
    panel's right edge at 150% text, the words themselves unchanged."""
    from PySide6.QtWidgets import QApplication

    window.lessonsAction.trigger()
    window.resize(1280, 800)
    window.presentation.set_font_scale(1.5)
    panel = window.lessonsPanel
    panel.go_to(len(LESSONS))  # the exercise
    for _ in range(3):
        QApplication.processEvents()
    label = panel.questionLabel
    assert label.isVisible()
    assert label.text().replace("\u200b", "") == EXERCISE.question
    scroll = panel.findChild(QWidget, "lessonsScroll")
    right = label.mapTo(scroll.viewport(), label.rect().topRight()).x()
    assert right <= scroll.viewport().width()
    assert label.height() >= label.heightForWidth(label.width())
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


def test_a_lesson_step_is_not_named_after_a_sweep_preset(window, qtbot):
    """The width sweep preset has the tutorial's config; a lesson step measuring that config
    is no sweep: the preset list names the plain preset, and no sweep is pending."""
    presets = window.presets
    presets.choose("width-sweep")
    assert presets.chosen().id == "width-sweep" and window.pending_sweep is not None
    window.set_config(window.current_config().replace(min_time=0.05))  # still the preset
    assert presets.chosen().id == "width-sweep"
    panel = show_lessons(window)
    panel.go_to(0)  # lesson 1: the tutorial's model
    with qtbot.waitSignal(panel.stepFinished, timeout=RUN_TIMEOUT_MS):
        assert panel.run_step()
    assert presets.chosen().id == "tutorial" and presets.shown_text() == "tutorial example"
    assert window.pending_sweep is None


def test_a_claim_the_tutorial_never_makes_reads_as_an_assumption(window):
    """Lesson 8 said "The tutorial says: (Not in the tutorial.)" and then "✓ Here the
    tutorial's claim holds": its claim is named a common assumption, and checked as one."""
    from autocast_explorer.core.learning.lessons import LessonOutcome
    from autocast_explorer.gui.features.lessons.steps import match_line

    panel = show_lessons(window)
    answers = next(i for i, lesson in enumerate(LESSONS) if lesson.id == "answers")
    panel.go_to(answers)
    claim = panel.claimLabel.text()
    assert claim == (
        "<i>A common assumption:</i> A trained model gives the same answers under autocast as "
        "in float32."
    )
    held = LessonOutcome("answers", "The same answers.", (), True, "accuracy")
    assert match_line(held, LESSONS[answers].claim_by == "tutorial")[0] == (
        "✓ Here the assumption holds."
    )
    for lesson in LESSONS:
        assert "tutorial" not in lesson.tutorial_claim.lower() or lesson.claim_by == "tutorial"
