"""Features are found by typed handles and views by id, never by attribute name or objectName.

The window publishes each handle as an attribute for testers, but its own calls and its
settings ask the context by key: overwriting the attribute changes nothing they do. A lesson
names its answer by the view id the window registered it under, and frames the part that view
declared, whatever that part's objectName.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from autocast_explorer.core.learning.lessons import CHARTS, LESSONS
from autocast_explorer.gui.features.lessons.dock import LESSONS_PANEL
from autocast_explorer.gui.features.presentation.mode import PRESENTATION
from autocast_explorer.gui.features.presets.box import PRESETS
from autocast_explorer.gui.features.sweeps.feature import SWEEPS
from autocast_explorer.gui.shell.handles import Handle, Handles


def test_a_handle_takes_only_its_own_class_and_each_name_once():
    handles = Handles()
    count = Handle("count", int)
    assert handles.publish(count, 3) == 3
    assert handles.get(count) == 3
    with pytest.raises(ValueError, match="two features publish 'count'"):
        handles.publish(Handle("count", int), 4)
    with pytest.raises(TypeError, match="words: str is no int"):
        handles.publish(Handle("words", int), "three")  # type: ignore[arg-type]
    # A key is the object declared, not its name: another key of that name finds nothing.
    with pytest.raises(LookupError, match="no feature published 'count'"):
        handles.get(Handle("count", int))
    assert handles.by_name() == {"count": 3}


def test_the_window_sets_every_published_handle_as_an_attribute(explorer):
    published = explorer.context.published()
    assert explorer.handles == published
    assert {"presets", "presentation", "lessonsPanel", "sweeps", "compareRuns"} <= set(published)
    for name, value in published.items():
        assert getattr(explorer, name) is value, name
    assert explorer.context.handle(PRESETS) is explorer.presets
    assert explorer.context.handle(SWEEPS) is explorer.sweeps


def test_the_window_calls_through_keys_not_attribute_names(explorer):
    presets = explorer.context.handle(PRESETS)
    panel = explorer.context.handle(LESSONS_PANEL)
    panel.go_to(2)
    for name in ("presets", "presentation", "lessonsPanel", "sweeps"):
        setattr(explorer, name, None)  # a tester's slip: the window must not read these back
    path = explorer.save_preset("by key", "saved through the PRESETS handle")
    assert path is not None and path.stem == "by-key"
    assert [p.name for p in presets.presets() if not p.builtin] == ["by key"]
    assert explorer.save_sweep("never.json") is False  # no sweep yet, asked of SWEEPS
    explorer.settingsKeeper.save()  # reads the presentation and the lesson step by key
    explorer.settingsKeeper.reset_to_defaults()
    assert panel.step_index() == 0
    assert explorer.context.handle(PRESENTATION).state().font_scale == 1.0


def test_every_view_a_lesson_names_is_registered_under_that_id(explorer):
    ids = explorer.context.view_ids()
    assert len(ids) == len(set(ids))
    assert {lesson.chart for lesson in LESSONS} <= set(CHARTS) <= set(ids)
    # Charts inside a tab are views of their own; their tab is the one that holds them.
    assert explorer.context.view("dtype") is explorer.dtypePlot
    assert explorer.context.view_title("dtype") == "Overview"
    assert explorer.context.view_title("loss") == "Training"
    with pytest.raises(ValueError, match="'agreement' exists already"):
        explorer.context.add_view_part("agreement", QLabel(), within="overview")


def test_a_lesson_frames_what_its_view_declared_whatever_its_object_name(explorer):
    explorer.accuracyView.flipBox.setObjectName("renamedBox")
    panel = explorer.lessonsPanel
    assert panel.show_chart("accuracy") == "accuracy"
    assert explorer.resultTabs.currentWidget() is explorer.accuracyView
    assert panel.highlight.target is explorer.accuracyView.flipBox
    assert panel.show_chart("loss") == "loss"  # a chart inside the Training tab
    assert explorer.resultTabs.currentWidget() is explorer.trainingView
    assert panel.highlight.target is explorer.lossPlot
