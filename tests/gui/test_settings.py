"""QSettings: the next window comes back as the last one closed; bad values fall back, loudly."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QScrollArea

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.gui import MainWindow
from autocast_explorer.gui.features.presentation.mode import PresentationState
from autocast_explorer.gui.window.settings import SETTINGS_ENV, open_settings
from tests.gui.helpers import TINY


def new_window(qtbot) -> MainWindow:
    win = MainWindow(autoload=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def settings_file() -> Path:
    return Path(os.environ[SETTINGS_ENV])


def test_the_tests_settings_file_is_private():
    assert settings_file().parent.name == "config-home"  # conftest's per-test folder
    assert Path(open_settings().fileName()) == settings_file()


def test_settings_persist_across_two_windows(qtbot):
    first = new_window(qtbot)
    assert first.settingsKeeper.problems == []
    config = TINY.replace(batch=5, dtype="float16", head="log_softmax")
    first.set_config(config)
    first.resize(900, 640)  # the offscreen screen is 800×800: restoreGeometry clamps
    first.presentation.set_font_scale(1.3)
    first.presentation.set_theme("projector")
    first.presentation.set_controls_hidden(True)
    first.lessonsAction.trigger()
    first.lessonsPanel.go_to(3)
    first.close()
    assert settings_file().is_file()

    second = new_window(qtbot)
    assert second.settingsKeeper.problems == []
    assert not second.messageBanner.isVisible()
    assert second.current_config() == config
    assert second.presentation.state() == PresentationState(1.3, "projector", True)
    assert second.latencyPlot.getPlotItem().getAxis("left").style["tickFont"].bold()
    assert second.presentation.projectorAction.isChecked()
    assert second.presentation.hideControlsAction.isChecked()
    assert not second.findChild(QScrollArea, "controlsScroll").isVisible()
    assert second.lessonsDock.isVisible()
    assert second.lessonsPanel.step_index() == 3
    assert (second.width(), second.height()) == (900, 640)


def test_an_invalid_config_is_not_saved_over_the_last_good_one(qtbot):
    first = new_window(qtbot)
    first.set_config(TINY)
    first.close()
    second = new_window(qtbot)
    second.widthsEdit.setText("32,,4")
    second.close()
    third = new_window(qtbot)
    assert third.current_config() == TINY


def test_corrupt_settings_fall_back_to_defaults_with_a_message(qtbot):
    path = settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[experiment]\n"
        'config="{\\"widths\\": [32, 16"\n'
        "[presentation]\n"
        "font_scale=banana\n"
        "theme=neon\n"
        "controls_hidden=maybe\n"
        "[window]\n"
        "geometry=not bytes\n"
        "[lessons]\n"
        "step=99\n"
    )
    win = new_window(qtbot)
    problems = win.settingsKeeper.problems
    assert [p.split(":")[0] for p in problems] == [
        "last config",
        "window size and position",
        "text scale",
        "theme",
        "controls hidden",
        "lesson step",
    ]
    assert "'banana' is not a number" in problems[2]
    assert win.messageBanner.isVisible()
    assert win.messageBanner.text().startswith("Some saved settings could not be used")
    assert "text scale" in win.messageBanner.text()
    assert win.current_config() == ExperimentConfig()
    assert win.presentation.state() == PresentationState()
    assert win.lessonsPanel.step_index() == 0
    win.close()
    # The bad values were replaced by good ones on close: the next start is clean.
    again = new_window(qtbot)
    assert again.settingsKeeper.problems == []


def test_a_config_that_breaks_the_rules_is_refused_like_any_input(qtbot):
    path = settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    store = open_settings()
    store.setValue("experiment/config", '{"widths": [32, 16, 4], "batch": 0}')
    store.sync()
    win = new_window(qtbot)
    assert win.settingsKeeper.problems == ["last config: batch: must be an integer ≥ 1 (got 0)"]
    assert win.current_config() == ExperimentConfig()


def test_reset_to_defaults_forgets_everything(qtbot):
    win = new_window(qtbot)
    win.set_config(TINY)
    win.presentation.set_font_scale(2.0)
    win.presentation.set_controls_hidden(True)
    win.lessonsAction.trigger()
    win.settingsKeeper.save()
    assert settings_file().is_file()
    win.settingsKeeper.resetAction.trigger()
    assert win.current_config() == ExperimentConfig()
    assert win.presentation.state() == PresentationState()
    assert not win.lessonsDock.isVisible()
    assert win.findChild(QScrollArea, "controlsScroll").isVisible()
    assert open_settings().allKeys() == []


def test_a_restored_lesson_step_names_a_chart_built_after_the_settings(qtbot):
    # Lesson 6 is answered by the Training tab's loss chart, a tab installed after the saved
    # state is restored (and, in the app's progressive window, after the first paint).
    store = open_settings()
    store.setValue("lessons/step", "5")
    store.sync()
    win = new_window(qtbot)
    panel = win.lessonsPanel
    assert panel.step_index() == 5 and panel.current_lesson().chart == "loss"
    assert panel.chartLabel.text() == "Answered by: <b>Training chart</b>"
