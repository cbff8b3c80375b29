"""What a presenter sees at 1024×640 with 150% text (and at 1280×800): a headline of at most two
lines in plain words with its reasons behind "Why?", text scaled once, the chart a lesson names
in view and whole, and the exercise opening at its question.

Sizes are read from the laid-out widgets (offscreen platform) and the fonts they draw with.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.learning.lessons import LESSONS
from autocast_explorer.gui.features.lessons.answer_chart import scroll_area_of
from tests.edits import edited, retimed
from tests.gui.helpers import run_to_end
from tests.gui.test_layout import settle

#: (window size, text scale, Lessons panel shown): where a presenter's chart must be whole.
PRESENTING = (((1024, 640), 1.5, True), ((1024, 640), 1.5, False), ((1280, 800), 1.0, True))
JARGON = ("IQR", "factor", "interval", "%", "level", "spans", "median")


def with_interval(result, speedup: float, low: float, high: float):
    """`result` with autocast's median and the paired interval set (no load reading)."""
    auto = edited(result.autocast, median_ms=result.plain.median_ms / speedup)
    evidence = TimingEvidence(
        interval=SpeedupInterval(low=low, high=high, level=0.95, pairs=24), stopped="max_time"
    )
    return retimed(result, autocast=auto, evidence=evidence)


def arrange(window, size, scale: float, lessons: bool) -> None:
    if window.lessonsDock.isVisible() != lessons:
        window.lessonsAction.trigger()
    window.presentation.set_font_scale(scale)
    window.resize(*size)
    settle(window)
    settle(window)


def wrapped_lines(label: QLabel) -> int:
    """How many lines `label`'s text takes at its width, in its own font (rounded: at 10 pt a
    line's box is 16 px where lineSpacing is 15, so two lines read 2.13)."""
    metrics = QFontMetrics(label.font())
    box = metrics.boundingRect(
        QRect(0, 0, label.contentsRect().width(), 100_000),
        int(Qt.TextFlag.TextWordWrap),
        label.text(),
    )
    return round(box.height() / metrics.lineSpacing())


def whole_in_view(widget: QWidget, viewport: QWidget) -> bool:
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    box = QRect(top_left, widget.size())
    return viewport.rect().contains(box)


@pytest.fixture
def measured(window, qtbot):
    result = run_to_end(qtbot, window)
    yield window, result
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


def shown_states(result, monkeypatch):
    """A result of each speed call (and one whose autocast forward raised)."""
    from tests.autocast_failure import failing_result

    states = {
        "faster": with_interval(result, 1.72, 1.66, 1.79),
        "slower": with_interval(result, 0.14, 0.13, 0.15),
        "unclear": with_interval(result, 1.02, 0.97, 1.08),
        "noisy": with_interval(result, 146.92, 0.4, 160.0),
    }
    for kind, state in states.items():
        assert state.speed_call.kind == kind
    states["raised"] = failing_result(monkeypatch)
    return states


@pytest.mark.parametrize("lessons", [True, False])
def test_the_headline_is_one_plain_sentence_of_at_most_two_lines(measured, monkeypatch, lessons):
    window, result = measured
    arrange(window, (1024, 640), 1.5, lessons)
    header = window.overview.header
    window.resultTabs.setCurrentWidget(window.overview)
    for kind, state in shown_states(result, monkeypatch).items():
        window.show_result(state)
        settle(window)
        label = header.headline
        text = label.text()
        assert text.count(". ") == 0 and text.endswith("."), (kind, text)
        assert not any(word in text for word in JARGON), (kind, text)
        assert wrapped_lines(label) <= 2, (kind, text, label.width())
        # The label really got that height (nothing cut), and no more than two lines' worth.
        line = QFontMetrics(label.font()).lineSpacing()
        assert label.heightForWidth(label.width()) <= label.height() <= 2 * line + 4, kind
    assert header.headline.styleSheet()  # the raised run's sentence is drawn as an error


@pytest.mark.parametrize("lessons", [True, False])
def test_the_latency_bars_labels_stay_in_the_plot_under_its_title(measured, monkeypatch, lessons):
    """At 1024×640 with 150% text the title takes two or three lines and the plot is short: the
    "3.22 ms" over a bar stood out of the plot, drawn over the title's last line."""
    window, result = measured
    arrange(window, (1024, 640), 1.5, lessons)
    window.resultTabs.setCurrentWidget(window.overview)
    chart = window.latencyPlot
    plot = chart.getPlotItem()
    for kind, state in shown_states(result, monkeypatch).items():
        window.show_result(state)
        settle(window)
        title = plot.titleLabel.sceneBoundingRect()
        box = plot.getViewBox().sceneBoundingRect()
        assert box.top() >= title.bottom() - 1, kind
        shown = [item for item in chart._value_labels if item.textItem.toPlainText()]
        assert len(shown) == (1 if kind == "raised" else 2), kind
        for item in shown:
            label = item.textItem.sceneBoundingRect()
            assert label.top() >= box.top() - 1, (kind, item.textItem.toPlainText())
            assert label.bottom() <= box.bottom(), kind


def test_the_reasons_wait_behind_why(measured, qtbot):
    window, result = measured
    noisy = with_interval(result, 146.92, 0.4, 160.0)
    window.show_result(noisy)
    header = window.overview.header
    button, panel = header.whyButton, header.whyPanel
    assert header.headline.text() == "Too noisy to tell whether autocast was faster here."
    call = noisy.speed_call
    assert call.reasons
    # Closed at first: no reason, load, guard line or warning in sight.
    assert button.isVisible() and not button.isChecked() and not panel.isVisible()
    assert not header.guard.isVisible() and not header.warnings.isVisible()
    assert "146.92" not in header.headline.text()
    assert button.toolTip() and button.focusPolicy() & Qt.FocusPolicy.TabFocus
    # Space on the focused button opens it: every reason and what helps are there.
    button.setFocus()
    QTest.keyClick(button, Qt.Key.Key_Space)
    assert button.isChecked() and panel.isVisible()
    why = header.why.text()
    for reason in call.reasons:
        assert reason in why
    assert f"What helps: {', '.join(call.advice)}." in why
    assert header.guard.isVisible() == bool(noisy.guard)
    # The View menu's entry follows the button, and closes it again.
    action = next(a for a in window.actions() if a.objectName() == "Why_this_verdict")
    assert action.isChecked() and action.isEnabled()
    action.trigger()
    assert not button.isChecked() and not panel.isVisible()
    # A new result keeps the reader's choice; no result hides the button.
    action.trigger()
    window.show_result(result)
    assert panel.isVisible() and header.why.text() != why
    window.clear_results()
    assert not button.isVisible() and not panel.isVisible()


def _font_sizes(window) -> dict[int, tuple[str, float]]:
    widgets = window.findChildren(QLabel) + window.findChildren(QAbstractButton)
    return {
        id(w): (w.objectName() or w.text()[:20], w.font().pointSizeF())
        for w in widgets
        if w.font().pointSizeF() > 0
    }


def test_text_scaling_applies_once_to_every_label_and_button(measured):
    """150% text makes every label and button 1.5× its 100% size: a label set only to be bold
    (the lesson's outcome, the exercise question) was scaled twice (2.25×)."""
    window, _result = measured
    window.lessonsAction.trigger()
    panel = window.lessonsPanel
    before = _font_sizes(window)
    window.presentation.set_font_scale(1.5)
    after = _font_sizes(window)
    wrong = [
        (name, size, after[key][1])
        for key, (name, size) in before.items()
        if key in after and after[key][1] != pytest.approx(size * 1.5, abs=0.01)
    ]
    assert wrong == []
    body = panel.explanationLabel.font().pointSizeF()
    assert panel.questionLabel.font().pointSizeF() == pytest.approx(body)
    assert panel.outcomeHeadline.font().pointSizeF() == pytest.approx(body)
    assert panel.titleLabel.font().pointSizeF() / body == pytest.approx(13 / 9, abs=0.15)


@pytest.mark.parametrize(("size", "scale", "lessons"), PRESENTING)
def test_the_chart_a_lesson_names_is_in_view_and_whole(measured, size, scale, lessons):
    window, _result = measured
    arrange(window, size, scale, lessons)
    panel = window.lessonsPanel
    hidden = []
    for step, lesson in enumerate(LESSONS):
        panel.go_to(step)
        panel.show_chart(lesson.chart)
        settle(window)
        chart = panel.highlight.target
        assert chart is not None and chart.isVisible(), lesson.id
        area = scroll_area_of(chart)
        if area is not None and not whole_in_view(chart, area.viewport()):
            top = chart.mapTo(area.viewport(), QPoint(0, 0)).y()
            hidden.append((lesson.number, chart.objectName(), top, chart.height()))
        hidden += [(lesson.number, "frame cut by", name) for name in frame_cut_by(panel.highlight)]
    assert hidden == [], str(hidden)


def frame_cut_by(frame) -> list[str]:
    """The widgets that cut the lesson's frame: it must surround its chart, and no ancestor
    below the page's viewport may clip it (a row with no margins left only its top edge)."""
    chart, parent = frame.target, frame.parentWidget()
    box = QRect(chart.mapTo(parent, QPoint(0, 0)), chart.size())
    line = frame.BORDER  # the frame's line surrounds the chart and covers none of it
    inside = frame.geometry().adjusted(line, line, -line, -line)
    cut = [] if inside.contains(box) else [f"{chart.objectName()} (not surrounded)"]
    area = scroll_area_of(chart)
    stop = area.viewport() if area is not None else None
    while parent is not None and parent is not stop:
        placed = QRect(frame.mapTo(parent, QPoint(0, 0)), frame.size())
        if not parent.rect().contains(placed):
            cut.append(parent.objectName() or type(parent).__name__)
        parent = parent.parentWidget()
    return cut


def test_the_chart_stays_where_the_reader_scrolled(measured):
    window, _result = measured
    arrange(window, (1024, 640), 1.5, True)
    panel = window.lessonsPanel
    panel.go_to(0)
    panel.show_chart("dtype")
    settle(window)
    area = scroll_area_of(window.dtypePlot)
    bar = area.verticalScrollBar()
    assert bar.value() > 0  # scrolled down to the chart
    bar.triggerAction(bar.SliderAction.SliderToMinimum)  # as the reader's wheel or keys do
    window.resize(1030, 640)  # a later layout pass must not pull the page back
    settle(window)
    assert bar.value() == 0


@pytest.mark.parametrize(("size", "scale", "lessons"), PRESENTING[::2])
def test_the_exercise_opens_at_its_question(measured, size, scale, lessons):
    window, _result = measured
    arrange(window, size, scale, lessons)
    panel = window.lessonsPanel
    scroll = panel.findChild(QWidget, "lessonsScroll")
    panel.go_to(4)
    bar = scroll.verticalScrollBar()
    bar.setValue(bar.maximum())  # read to the end of a lesson
    panel.next_step()
    panel.go_to(len(panel.steps()) - 1)
    settle(window)
    question = panel.questionLabel
    assert question.text().replace("\u200b", "").startswith("Under torch.autocast(")
    assert whole_in_view(question, scroll.viewport())
