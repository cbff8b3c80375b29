"""Presentation mode: text scale (widgets and charts), full screen, projector theme, no controls."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import QMenu, QScrollArea

from autocast_explorer.gui.features.presentation.mode import PROJECTOR_FACTOR
from autocast_explorer.gui.shell.actions import audit_shortcuts
from autocast_explorer.gui.shell.keys import (
    StandardKey,
    shortcut_conflicts,
    standard_key_of,
    standard_shortcuts,
)
from tests.gui.helpers import RUN_TIMEOUT_MS, run_to_end

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def activate(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)


def tick_pt(plot: pg.PlotWidget, axis: str = "left") -> float:
    return plot.getPlotItem().getAxis(axis).style["tickFont"].pointSizeF()


def test_ctrl_plus_minus_zero_scale_widgets_and_chart_text(window, qtbot):
    result = run_to_end(qtbot, window)
    activate(window, qtbot)
    edit_pt = window.widthsEdit.font().pointSizeF()
    headline = window.overview.header.headline
    headline_pt = headline.font().pointSizeF()
    latency_tick = tick_pt(window.latencyPlot)
    value_label = window.latencyPlot._value_labels[0]
    value_pt = value_label.textItem.font().pointSizeF()
    axis_height = window.latencyPlot.getPlotItem().getAxis("bottom").fixedHeight

    qtbot.keyClick(window, Qt.Key.Key_Equal, CTRL)
    assert window.presentation.font_scale == 1.15
    assert window.widthsEdit.font().pointSizeF() == pytest.approx(edit_pt * 1.15)
    assert headline.font().pointSizeF() == pytest.approx(headline_pt * 1.15)  # its own size
    assert tick_pt(window.latencyPlot) == pytest.approx(latency_tick * 1.15)
    assert value_label.textItem.font().pointSizeF() == pytest.approx(value_pt * 1.15)
    title = window.latencyPlot.getPlotItem().titleLabel
    assert title.opts["size"] == "14.95pt"  # 13 pt × 1.15
    assert "font-size:13.8pt" in title.text  # the second line: 12 pt × 1.15
    bottom = window.latencyPlot.getPlotItem().getAxis("bottom")
    assert bottom.fixedHeight >= round(axis_height * 1.15)  # more if the caption wraps
    assert bottom.label.boundingRect().width() <= bottom.width()  # never cut at the ends

    qtbot.keyClick(window, Qt.Key.Key_Minus, CTRL)
    qtbot.keyClick(window, Qt.Key.Key_Minus, CTRL)
    assert window.presentation.font_scale == 0.9
    assert window.widthsEdit.font().pointSizeF() == pytest.approx(edit_pt * 0.9)

    # A new result keeps the scale (new chart items too) and draws the same numbers.
    window.presentation.set_font_scale(2.0)
    again = run_to_end(qtbot, window)
    assert tick_pt(window.dtypePlot, "bottom") == pytest.approx(22.0)
    assert window.latencyPlot.drawn()["heights"] == pytest.approx(
        [again.plain.median_ms, again.autocast.median_ms]
    )
    assert result is not again

    qtbot.keyClick(window, Qt.Key.Key_0, CTRL)
    assert window.presentation.font_scale == 1.0
    assert window.widthsEdit.font().pointSizeF() == pytest.approx(edit_pt)
    assert headline.font().pointSizeF() == pytest.approx(headline_pt)
    assert tick_pt(window.latencyPlot) == pytest.approx(latency_tick)
    assert title.opts["size"] == "13pt"
    assert "font-size:12pt" in title.text


def test_f11_toggles_full_screen(window, qtbot):
    activate(window, qtbot)
    assert not window.isFullScreen()
    qtbot.keyClick(window, Qt.Key.Key_F11)
    qtbot.waitUntil(window.isFullScreen, timeout=5000)
    assert window.presentation.fullScreenAction.isChecked()
    qtbot.keyClick(window, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=5000)
    assert not window.presentation.fullScreenAction.isChecked()


def test_ctrl_shift_c_hides_the_controls_and_f5_still_runs(window, qtbot):
    activate(window, qtbot)
    controls = window.findChild(QScrollArea, "controlsScroll")
    charts_width = window.resultTabs.width()
    qtbot.keyClick(window, Qt.Key.Key_C, CTRL | SHIFT)
    assert not controls.isVisible()
    assert not window.runButton.isVisible()
    qtbot.waitUntil(lambda: window.resultTabs.width() > charts_width + 200, timeout=5000)
    with qtbot.waitSignal(window.experimentFinished, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.keyClick(window, Qt.Key.Key_C, CTRL | SHIFT)
    assert controls.isVisible()
    with qtbot.waitSignal(window.experimentFinished, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(window.widthsEdit, Qt.Key.Key_F5)  # the button's own shortcut again


def test_projector_theme_is_black_on_white_larger_with_bold_charts(window, qtbot):
    run_to_end(qtbot, window)
    edit_pt = window.widthsEdit.font().pointSizeF()
    latency_tick = tick_pt(window.latencyPlot)
    window.presentation.projectorAction.trigger()
    assert window.presentation.theme == "projector"
    palette = window.widthsEdit.palette()
    assert palette.color(QPalette.ColorRole.Window).name() == "#ffffff"
    assert palette.color(QPalette.ColorRole.WindowText).name() == "#000000"
    assert window.widthsEdit.font().pointSizeF() == pytest.approx(edit_pt * PROJECTOR_FACTOR)
    assert window.latencyPlot.getPlotItem().getAxis("bottom").style["tickFont"].bold()
    axis = window.latencyPlot.getPlotItem().getAxis("left")
    assert axis.pen().width() == 2
    assert axis.pen().color().name() == "#000000"
    assert tick_pt(window.latencyPlot) == pytest.approx(latency_tick * PROJECTOR_FACTOR)

    window.presentation.projectorAction.trigger()
    assert window.presentation.theme == "standard"
    assert not window.dtypePlot.getPlotItem().getAxis("left").style["tickFont"].bold()
    assert window.widthsEdit.font().pointSizeF() == pytest.approx(edit_pt)
    assert axis.pen().width() != 2 or axis.pen().color().name() != "#000000"


def test_every_menu_action_shows_its_shortcut_in_the_menu_and_tooltip(window):
    missing = audit_shortcuts(window)
    export_menu = window.findChild(QMenu, "exportMenu")
    # Without a key: one export entry per chart, and the two About boxes (no standard key).
    allowed = [*export_menu.actions(), window.aboutAction, window.aboutQtAction]
    assert missing
    assert {id(a) for a in missing} <= {id(a) for a in allowed}
    assert "Latency chart…" in {a.text().replace("&", "") for a in missing}
    checked = 0
    for menu in window.findChildren(QMenu):
        if menu.objectName() == "exportMenu":
            continue
        assert menu.toolTipsVisible()
        for action in menu.actions():
            if action.isSeparator() or action.menu() is not None or action in allowed:
                continue
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            shown = keys or action.text().split("\t")[1]
            assert shown in action.toolTip(), action.text()
            checked += 1
    assert checked >= 20
    custom = {
        "saveCsvAction": "Ctrl+Shift+E",
        "exportReportAction": "Ctrl+E",
        "compareAction": "Ctrl+Shift+O",
        "lessonsAction": "Ctrl+L",
    }
    for name, keys in custom.items():
        assert getattr(window, name).shortcut() == QKeySequence(keys), name
    assert window.presets.chooseAction.shortcut() == QKeySequence("F4")
    assert window.presentation.hideControlsAction.shortcut() == QKeySequence("Ctrl+Shift+C")


def _standard_actions(window) -> dict[str, tuple[QAction, StandardKey]]:
    p = window.presentation
    return {
        "open": (window.openAction, StandardKey.Open),
        "save": (window.saveJsonAction, StandardKey.Save),
        "save as": (window.saveAsAction, StandardKey.SaveAs),
        "quit": (window.quitAction, StandardKey.Quit),
        "help": (window.helpAction, StandardKey.HelpContents),
        "zoom in": (p.zoomInAction, StandardKey.ZoomIn),
        "zoom out": (p.zoomOutAction, StandardKey.ZoomOut),
        "full screen": (p.fullScreenAction, StandardKey.FullScreen),
        "compare: add files": (window.compare_window.addFilesAction, StandardKey.Open),
        "compare: close": (window.compare_window.closeAction, StandardKey.Close),
    }


def test_actions_with_a_standard_meaning_use_the_platforms_standard_keys(window):
    for what, (action, key) in _standard_actions(window).items():
        platform_keys = standard_shortcuts(key)
        assert platform_keys, what  # every one has a key here (Quit via its fallback)
        assert action.shortcuts()[: len(platform_keys)] == platform_keys, what
        assert standard_key_of(action) == key, what
    # Zoom in also answers Ctrl+= (where + needs Shift); F1 is help wherever F1 is a help key.
    assert QKeySequence("Ctrl+=") in window.presentation.zoomInAction.shortcuts()
    if QKeySequence("F1") in QKeySequence.keyBindings(StandardKey.HelpContents):
        assert window.helpAction.shortcut() == QKeySequence("F1")
    assert window.aboutAction.shortcuts() == []  # F1 means help, not About


def test_no_shortcut_collides_with_a_system_key_or_another_standard_meaning(window):
    actions = [
        *window.findChildren(QAction),
        *window.compare_window.findChildren(QAction),
        *window.show_help().findChildren(QAction),
    ]
    assert len([a for a in actions if a.shortcuts()]) >= 25
    assert shortcut_conflicts(actions) == []
    # The check itself finds what it is for (the keys this window used to have).
    probe = QAction("probe", window)
    for keys, found in (
        ("Ctrl+H", "macOS: hide the application"),
        ("Ctrl+P", "is this platform's Print key"),
        ("Meta+E", "Super key belongs to the desktop"),
    ):
        probe.setShortcut(QKeySequence(keys))
        assert found in "\n".join(shortcut_conflicts([probe])), keys


def test_help_menu_has_help_about_qt_and_about(window):
    help_menu = window.findChild(QMenu, "helpMenu")
    entries = [a for a in help_menu.actions() if not a.isSeparator()]
    assert entries == [window.helpAction, window.aboutQtAction, window.aboutAction]
    assert window.aboutQtAction.menuRole() == QAction.MenuRole.AboutQtRole
    assert window.aboutAction.menuRole() == QAction.MenuRole.AboutRole


def test_no_two_actions_share_a_shortcut(window):
    """An ambiguous shortcut triggers nothing in Qt, so every key must belong to one action."""
    owners: dict[str, list[str]] = {}
    for action in window.findChildren(QAction):
        for keys in action.shortcuts():
            text = keys.toString(QKeySequence.SequenceFormat.PortableText)
            owners.setdefault(text, []).append(action.text().replace("&", ""))
    shared = {keys: names for keys, names in owners.items() if len(set(names)) > 1}
    assert shared == {}
    assert {"F6", "F7", "F8", "F9", "Ctrl+Shift+P", "F4", "Ctrl+Shift+E"} <= set(owners)


def test_run_menu_starts_with_run_and_cancel(window):
    texts = [a.text() for a in window.menu("&Run").actions()]
    assert texts[:2] == ["&Run experiment\tF5", "&Cancel run\tEsc"]
    assert window.menu("&Run").actions()[2].isSeparator()
    assert "Probe op &policies" in texts
