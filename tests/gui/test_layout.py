"""The window at 1024×640 with the Lessons panel open, at 100% and 150% text: nothing cut, nothing
drawn over something else, and the status bar's verdict never covered by a passing message.

Geometry is read from the laid-out widgets (offscreen platform): a chart narrower than its page,
a label shorter than the height its wrapped text needs, or two widgets whose rectangles overlap
is the bug the layout sweep's screenshots showed.
"""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from autocast_explorer.gui.charts.dtype_chart import CELL_HEIGHT, STRIPE_HEIGHT
from autocast_explorer.gui.charts.latency_chart import LatencyChart
from autocast_explorer.gui.features.hardware.tab import ROOFLINE_MIN_HEIGHT
from autocast_explorer.gui.features.presentation.mode import chart_minimum
from tests.gui.helpers import run_to_end, tiny_gru

SMALL = (1024, 640)
RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea


def settle(window=None) -> None:
    """Let the layout settle: queued events, and the result room's pass when `window` has one
    queued (a 0 ms timer after a resize or a new text scale, which may move a dock)."""
    for _ in range(3):
        QApplication.processEvents()
    for _ in range(20):
        if window is None or not window.resultRoom.is_pending():
            break
        QApplication.processEvents()
    for _ in range(3):
        QApplication.processEvents()


def rect_in(widget: QWidget, ancestor: QWidget) -> QRect:
    """`widget`'s rectangle in `ancestor`'s coordinates."""
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


def open_small(window, scale: float) -> None:
    if not window.lessonsDock.isVisible():
        window.lessonsAction.trigger()
    window.presentation.set_font_scale(scale)
    window.resize(*SMALL)
    settle(window)
    assert window.lessonsDock.isVisible()


def show_tab(window, widget: QWidget) -> None:
    window.resultTabs.setCurrentWidget(widget)
    settle()


def assert_label_whole(label: QLabel) -> None:
    """A word-wrapped label got the height its text needs at its width (nothing cut below)."""
    assert label.isVisible()
    needed = label.heightForWidth(label.width())
    assert label.height() >= needed, (label.objectName(), label.height(), needed, label.text())


@pytest.fixture
def shown_run(window, qtbot):
    result = run_to_end(qtbot, window)
    yield window, result
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_overview_at_1024x640_with_lessons_stacks_charts_inside_the_page(shown_run, scale):
    window, _result = shown_run
    open_small(window, scale)
    overview = window.overview
    show_tab(window, overview)
    viewport = overview.scrollArea.viewport()
    # About 380 px is left between the controls and the Lessons panel at 100%; at 150% the
    # panel has moved below and the tabs have about 570 px: the charts stack either way.
    assert viewport.width() < 2 * overview.CHART_WIDTH * scale
    assert overview.chartsRow.stacked()
    page = overview.scrollArea.widget()
    for chart in (overview.latency, overview.agreement, overview.dtypes):
        box = rect_in(chart, page)
        assert box.left() >= 0 and box.right() <= viewport.width(), chart.objectName()
        assert box.height() >= chart.minimumHeight() > 0
    latency, agreement = (rect_in(c, page) for c in (overview.latency, overview.agreement))
    assert not latency.intersects(agreement)
    # The headline and details wrap whole: the page scrolls rather than cutting them.
    for label in (overview.header.headline, overview.header.details):
        assert_label_whole(label)
        assert rect_in(label, page).right() <= viewport.width()


def test_overview_side_by_side_when_wide(shown_run):
    window, _result = shown_run
    if window.lessonsDock.isVisible():
        window.lessonsAction.trigger()
    window.resize(1920, 1080)
    show_tab(window, window.overview)
    overview = window.overview
    assert not overview.chartsRow.stacked()
    latency, agreement = overview.latency.geometry(), overview.agreement.geometry()
    assert latency.top() == agreement.top() and latency.right() < agreement.left()


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_hardware_roofline_never_overlaps_its_formula(shown_run, scale):
    window, result = shown_run
    open_small(window, scale)
    tab = window.findChild(QWidget, "hardwareTab")
    show_tab(window, tab)
    assert tab.formulaLabel.text()
    page = tab.findChild(QWidget, "hardwareScroll").widget()
    plot, formula = rect_in(tab.rooflinePlot, page), rect_in(tab.formulaLabel, page)
    table = rect_in(tab.table, page)
    assert not plot.intersects(formula)
    assert not plot.intersects(table) and not formula.intersects(table)
    # Its minimum grows with the text (the page scrolls rather than squeeze the plot).
    minimum = chart_minimum((0, ROOFLINE_MIN_HEIGHT), scale)[1]
    assert plot.height() >= tab.rooflinePlot.minimumHeight() == minimum
    # Its legend is a row under the axis: inside the plot it covered the lower peak's label.
    legend = tab.rooflinePlot._legend
    assert [label.text for _sample, label in legend.items] == [
        "float32 (plain), measured",
        f"autocast {result.config.dtype}, measured",
    ]
    view = tab.rooflinePlot.getPlotItem().getViewBox().sceneBoundingRect()
    assert not legend.sceneBoundingRect().intersects(view)
    assert_label_whole(tab.formulaLabel)
    assert_label_whole(tab.verdictHeadline)


def test_status_message_never_covers_the_verdict(shown_run, qtbot):
    window, _result = shown_run
    verdict = window.verdictLabel.text()
    assert verdict and window.verdictLabel.isVisible()
    window.presentation.set_font_scale(1.5)  # shows "Text at 150%" for 3 s
    settle()
    message = window.statusMessageLabel
    assert message.isVisible() and message.text() == "Text at 150%"
    assert window.statusBar().currentMessage() == "Text at 150%"
    # The verdict is still shown, unchanged, beside the message, not under it.
    assert window.verdictLabel.isVisible() and window.verdictLabel.text() == verdict
    assert not window.verdictLabel.geometry().intersects(message.geometry())
    assert window.verdictLabel.width() > 0
    qtbot.waitUntil(lambda: not message.isVisible(), timeout=5000)
    assert window.verdictLabel.text() == verdict and window.verdictLabel.isVisible()


def test_long_verdict_elides_and_keeps_the_whole_sentence(shown_run):
    window, _result = shown_run
    open_small(window, 1.5)
    label = window.verdictLabel
    sentence = "autocast was slower here " * 20
    label.setText(sentence)
    settle()
    assert label.text() == sentence and label.is_elided()
    assert label.toolTip().startswith(sentence)
    assert 0 < label.geometry().right() <= window.statusBar().width()


def test_stale_mark_names_the_shown_config_and_clears(window, qtbot):
    from dataclasses import replace

    from autocast_explorer.core.experiment.config_words import config_line

    stale = window.staleLabel
    assert not stale.isVisible()
    result = run_to_end(qtbot, window)
    assert window.current_config() == result.config
    assert not stale.isVisible() and stale.text() == ""
    # Another batch size: the result on screen is no longer what the controls describe.
    window.set_config(replace(result.config, batch=result.config.batch + 1))
    settle()
    assert stale.isVisible()
    assert stale.text() == (
        f"Result is for {config_line(result.config)} — press Run (F5) to measure this one."
    )
    assert f"batch {result.config.batch} " in stale.text()
    # Back to the shown config: the mark goes.
    window.set_config(result.config)
    settle()
    assert not stale.isVisible() and stale.text() == ""
    # Another dtype, then a new run of it: the new result matches the controls.
    window.set_config(replace(result.config, dtype="float16"))
    settle()
    assert stale.isVisible() and "autocast bfloat16" in stale.text()
    again = run_to_end(qtbot, window)
    assert again.config.dtype == "float16"
    assert not stale.isVisible()


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_lstm_finding_reads_whole_at_1024x640(window, qtbot, scale):
    """The LSTM's finding (torch raised, or silently kept float32) wraps inside the Overview's
    page: every line within the viewport's width, the label as tall as its text."""
    from autocast_explorer.core.experiment.config import ExperimentConfig

    window.set_config(
        ExperimentConfig(
            model="rnn", cell="lstm", features=8, hidden=16, seq=5, depth=2, batch=3,
            min_time=0.02,
        )
    )  # fmt: skip
    run_to_end(qtbot, window)
    open_small(window, scale)
    overview = window.overview
    show_tab(window, overview)
    finding = overview.header.finding
    if not finding.isVisible():
        # Neither an error nor a silent float32 here: the LSTM ran its listed op as listed.
        assert "Finding" not in finding.text() and "torch said" not in finding.text()
    else:
        assert_label_whole(finding)
        page, viewport = overview.scrollArea.widget(), overview.scrollArea.viewport()
        assert rect_in(finding, page).right() <= viewport.width()
        assert page.width() <= viewport.width()  # no sideways scrolling needed to read it
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_autocast_error_finding_wraps_whole_on_every_cpu(window, qtbot, monkeypatch, scale):
    """The same finding on every CPU kind: a layer that raises under autocast (as oneDNN's LSTM
    does on AVX2), shown at 1024×640 with the Lessons panel."""
    from tests.autocast_failure import MESSAGE, failing_result

    result = failing_result(monkeypatch)
    window.show_result(result)
    open_small(window, scale)
    overview = window.overview
    show_tab(window, overview)
    finding = overview.header.finding
    assert MESSAGE in finding.text() and "What it means" in finding.text()
    assert_label_whole(finding)
    page, viewport = overview.scrollArea.widget(), overview.scrollArea.viewport()
    assert rect_in(finding, page).right() <= viewport.width()
    assert page.width() <= viewport.width()
    # The page scrolls to the finding's last line.
    overview.scrollArea.ensureWidgetVisible(finding, 0, 0)
    settle()
    bottom = finding.mapTo(overview.scrollArea.viewport(), QPoint(0, finding.height()))
    assert bottom.y() <= viewport.height() or finding.height() > viewport.height()
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


def test_marked_rows_stack_when_the_tab_is_narrow_and_return_when_wide(shown_run):
    """Agreement's and Op trace's splitters, Routes' charts: stacked at 1024×640 with the
    Lessons panel (no page wider than its tab), side by side again at 1920×1080."""
    from PySide6.QtWidgets import QSplitter

    window, _result = shown_run
    agreement = window.findChild(QSplitter, "agreementSplitter")
    optrace = window.findChild(QSplitter, "opTraceSplitter")
    routes = window.findChild(QWidget, "routesView")
    open_small(window, 1.0)
    for page, splitter in ((window.agreementView, agreement), (window.opTraceView, optrace)):
        show_tab(window, page)
        area = page.parentWidget().parentWidget()
        assert splitter.orientation() == Qt.Orientation.Vertical
        assert page.width() <= area.viewport().width()  # nothing off to the right
    show_tab(window, routes)
    latency, compile_ = routes.latencyChart.geometry(), routes.compileChart.geometry()
    assert latency.bottom() < compile_.top()  # one above the other
    if window.lessonsDock.isVisible():
        window.lessonsAction.trigger()
    window.resize(1920, 1080)
    settle()
    show_tab(window, routes)
    latency, compile_ = routes.latencyChart.geometry(), routes.compileChart.geometry()
    assert latency.right() < compile_.left() and latency.top() == compile_.top()
    show_tab(window, window.agreementView)
    assert agreement.orientation() == Qt.Orientation.Horizontal


SIZES = ((1024, 640), (1280, 800), (1920, 1080))


@pytest.mark.parametrize("scale", [1.0, 1.5])
@pytest.mark.parametrize("lessons", [False, True])
@pytest.mark.parametrize("size", SIZES)
def test_every_tab_fits_its_width_and_no_chart_is_squeezed(shown_run, size, lessons, scale):
    """No tab needs sideways scrolling at any of the three sizes, with or without the Lessons
    panel, at 100% and 150% text: rows stack, columns wrap, the panel moves below where the
    tabs would be too narrow (the Sweeps page with a sweep's values typed in). Every chart
    shown gets at least its minimum height, which grows with the text, so a page scrolls
    down rather than squeeze a plot flat (the Routes plot was 60 px at 150%)."""
    window, _result = shown_run
    if window.lessonsDock.isVisible() != lessons:
        window.lessonsAction.trigger()
    window.presentation.set_font_scale(scale)
    window.resize(*size)
    settle(window)
    window.sweeps.sweeps.set_sweep("batch", "1:1024:11")
    tabs = window.resultTabs
    wide, squeezed = [], []
    for i in range(tabs.count()):
        page = tabs.widget(i)
        tabs.setCurrentIndex(i)
        settle()
        area = page.parentWidget().parentWidget()
        if page.width() > area.viewport().width():
            wide.append((tabs.tabText(i), page.width(), area.viewport().width()))
        for chart in page.findChildren(pg.PlotWidget):
            if chart.isVisibleTo(page) and chart.height() < chart.minimumHeight():
                squeezed.append((chart.objectName(), chart.height(), chart.minimumHeight()))
    assert wide == []
    assert squeezed == []
    assert window.latencyPlot.minimumHeight() == chart_minimum(LatencyChart.MINIMUM, scale)[1]


def _dock_area_becomes(qtbot, window, dock, area) -> None:
    """Wait for the result room's pass (a 0 ms timer after the resize or the new text scale)."""
    qtbot.waitUntil(lambda: window.dockWidgetArea(dock) == area, timeout=3000)
    settle()


def test_lessons_panel_moves_below_the_results_when_they_would_be_too_narrow(shown_run, qtbot):
    """1024×640 at 150% text left the tabs 270 px between the controls and the panel: the
    panel moves below them, and back to its side as soon as there is room again."""
    from autocast_explorer.gui.window.result_room import RESULTS_NARROWEST

    window, _result = shown_run
    dock, room = window.lessonsDock, window.resultRoom
    open_small(window, 1.0)
    assert window.dockWidgetArea(dock) == RIGHT
    assert window.resultTabs.width() >= RESULTS_NARROWEST  # 380 px: readable at 100%
    window.presentation.set_font_scale(1.5)
    _dock_area_becomes(qtbot, window, dock, BOTTOM)
    assert room.moved_below() == [dock] and room.user_placed() == []
    assert window.resultTabs.width() >= RESULTS_NARROWEST * 1.5
    window.lessonsAction.trigger()  # hidden and shown again (Ctrl+L twice): no user move
    window.lessonsAction.trigger()
    settle()
    assert window.dockWidgetArea(dock) == BOTTOM
    assert room.moved_below() == [dock] and room.user_placed() == []
    assert dock.geometry().top() >= window.resultTabs.mapTo(window, QPoint(0, 0)).y()
    # The layout saved is the one the user chose, the panel at its side; saving moves nothing.
    state = window.layout_state()
    assert window.dockWidgetArea(dock) == BOTTOM and room.moved_below() == [dock]
    # Restored while the panel is below: it goes where the saved layout says, nothing is
    # "moved below" any more, and the small window moves it again on its own pass.
    assert window.restore_layout(state)
    assert window.dockWidgetArea(dock) == RIGHT and room.moved_below() == []
    _dock_area_becomes(qtbot, window, dock, BOTTOM)
    # A wide window brings it back; so does normal text at 1024 px.
    window.resize(1920, 1080)
    _dock_area_becomes(qtbot, window, dock, RIGHT)
    assert room.moved_below() == []
    window.resize(*SMALL)
    _dock_area_becomes(qtbot, window, dock, BOTTOM)
    window.presentation.set_font_scale(1.0)
    _dock_area_becomes(qtbot, window, dock, RIGHT)
    assert room.user_placed() == []  # none of these moves was the user's


def test_no_pass_pending_means_the_tabs_already_have_their_width(window, qtbot):
    """`is_pending()` turns false once the window is laid out as the pass left it, not one
    layout pass before (the tabs read 264 px there, and 610 px a moment later)."""
    room = window.resultRoom
    window.lessonsAction.trigger()
    window.presentation.set_font_scale(1.5)
    window.resize(*SMALL)
    qtbot.waitUntil(lambda: not room.is_pending(), timeout=5000)
    width = window.resultTabs.width()
    assert window.dockWidgetArea(window.lessonsDock) == BOTTOM
    assert width >= room.narrowest()
    settle(window)
    assert window.resultTabs.width() == width


def test_a_panel_the_user_moved_stays_where_they_put_it(shown_run, qtbot):
    """Dragged back beside the results in a window too narrow for it, or anywhere else, the
    panel stays where the user put it: the result room never moves it again."""
    window, _result = shown_run
    dock, room = window.lessonsDock, window.resultRoom
    open_small(window, 1.5)
    _dock_area_becomes(qtbot, window, dock, BOTTOM)
    window.addDockWidget(RIGHT, dock)  # as a drag would
    settle()
    window.resize(1030, 640)  # any later pass
    settle()
    qtbot.wait(50)
    assert window.dockWidgetArea(dock) == RIGHT
    assert room.moved_below() == [] and room.user_placed() == [dock]
    window.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, dock)
    window.resize(1920, 1080)
    settle()
    qtbot.wait(50)
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.TopDockWidgetArea


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_bottom_tick_labels_get_their_whole_line(shown_run, scale):
    """The dtype chart's layer names ("gru") lost their lower part: pyqtgraph left 0.8 of a
    line for them. The axis now holds the tick font's whole line at every text scale."""
    from PySide6.QtGui import QFontMetrics

    window, _result = shown_run
    window.presentation.set_font_scale(scale)
    window.resize(1920, 1080)
    show_tab(window, window.overview)
    for chart in (window.dtypePlot, window.agreementPlot):
        axis = chart.getPlotItem().getAxis("bottom")
        line = QFontMetrics(axis.style["tickFont"]).height()
        offset = axis.style["tickTextOffset"][1] + max(0, axis.style["tickLength"])
        assert axis.height() >= line + offset, chart.objectName()
        assert axis.mapRectToScene(axis.boundingRect()).bottom() <= chart.height()


@pytest.fixture
def gru_run(window, qtbot):
    """A GRU: its autocast cell is mixed (float32 out, bfloat16 maths inside)."""
    window.set_config(tiny_gru())
    result = run_to_end(qtbot, window)
    yield window, result
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


def _mixed_label(chart):
    """The shown label of the mixed cell, and that cell."""
    for item, cell in zip(chart._labels, chart._label_cells, strict=True):
        if cell is not None and cell.mixed and item.isVisible():
            return item, cell
    raise AssertionError("no mixed cell label shown")


@pytest.mark.parametrize(("size", "scale"), [((1920, 1080), 1.0), ((1280, 800), 1.5)])
def test_a_mixed_cells_text_never_covers_its_stripe(gru_run, size, scale):
    """The mixed cell's "fp32→fp32 / bf16 inside" was drawn over its stripe at 150% text: the
    text sits above the stripe, and keeps only its first line where two do not fit."""
    window, _result = gru_run
    if window.lessonsDock.isVisible():
        window.lessonsAction.trigger()
    window.presentation.set_font_scale(scale)
    window.resize(*size)
    show_tab(window, window.overview)
    chart = window.dtypePlot
    label, cell = _mixed_label(chart)
    (stripe_x, stripe_y, _color), *_ = chart.drawn_stripes()
    view = chart.getPlotItem().getViewBox()
    stripe_top = view.mapViewToScene(pg.Point(stripe_x, stripe_y + CELL_HEIGHT * STRIPE_HEIGHT)).y()
    # The text's box in pixels (a TextItem ignores the view's scaling), centred on its anchor;
    # read from the data position, as the view places it when it next paints.
    centre = view.mapViewToScene(label.pos()).y()
    box = label.textItem.boundingRect().height()
    assert centre + box / 2 <= stripe_top + 1
    lines = label.toPlainText().split("\n")
    assert lines[0] == "fp32→fp32"
    assert cell.layer == "gru" and cell.mode == "autocast"
    assert cell.label == "fp32→fp32\nbf16 inside"  # the whole text stays the cell's (tooltip)
    assert cell.label.split("\n")[: len(lines)] == lines


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_chart_hints_and_titles_stay_inside_their_chart(shown_run, scale):
    """A centred hint ("Choose Training mode and press Run (F5)") was cut at both edges at 150%;
    a long title shrank to a third of its size. Hints wrap to the plot; titles shrink to
    MIN_FIT at most and wrap beyond that, their row growing by the extra line."""
    from autocast_explorer.gui.shell import style
    from autocast_explorer.gui.shell.fit_title import MIN_FIT

    window, _result = shown_run
    if window.lessonsDock.isVisible():
        window.lessonsAction.trigger()
    window.presentation.set_font_scale(scale)
    window.resize(1280, 800)  # the loss chart beside the memory chart: about 330 px
    loss = window.findChild(pg.PlotWidget, "lossPlot")
    tabs = window.resultTabs
    (page,) = (tabs.widget(i) for i in range(tabs.count()) if tabs.widget(i).isAncestorOf(loss))
    show_tab(window, page)
    view = loss.getPlotItem().getViewBox()
    hint = loss._hint
    assert hint.toPlainText().startswith("Choose Training mode")
    # Its box in pixels, centred on its data position (as the view places it when it paints).
    centre = view.mapViewToScene(hint.pos()).x()
    half = hint.textItem.boundingRect().width() / 2
    area = view.sceneBoundingRect()
    assert area.left() <= centre - half and centre + half <= area.right()
    # Latency beside agreement, about 570 px each. A short title fits as it is; a long one,
    # which would shrink below MIN_FIT, wraps and its row grows by the extra line.
    window.lessonsAction.trigger()
    window.resize(1920, 1080)
    show_tab(window, window.overview)
    plot = window.latencyPlot.getPlotItem()
    title = plot.titleLabel
    style.set_title(plot, "Latency per forward", "plain vs autocast")
    settle()
    assert title.fit() == 1.0 and title.item.textWidth() < 0
    assert title.maximumHeight() == title.row_height
    long = "autocast 2.08× slower (speedup 0.48×, 95%: 0.46–0.50) · " * 3
    style.set_title(plot, "Latency per forward", long)
    settle()
    assert title.fit() == MIN_FIT and title.item.textWidth() > 0
    drawn = title.item.mapRectToScene(title.item.boundingRect())
    assert drawn.width() <= title.width() + 1
    assert title.maximumHeight() > title.row_height  # its row grew by the extra lines
    assert drawn.height() <= title.maximumHeight() + 1


def test_the_time_guard_line_follows_the_text_scale(shown_run):
    window, _result = shown_run
    guard = window.overview.header.guard
    base = guard.font().pointSizeF()
    window.presentation.set_font_scale(1.5)
    assert guard.font().pointSizeF() == pytest.approx(base * 1.5)
    assert "font-size" not in guard.styleSheet()


def test_a_long_sweep_warning_never_widens_the_sweeps_tab(window):
    """Its lines are elided to the tab; the page stays as wide as its viewport."""
    window.resize(1920, 1080)
    tab = window.sweeps.sweeps
    show_tab(window, tab)
    warning = "11 of 11 points had noisy timings: " + ", ".join(f"batch {2**i}" for i in range(40))
    tab._set_warnings((warning,))  # elided to a 1920 px window's tab
    settle()
    window.resize(1280, 800)
    settle()
    area = tab.parentWidget().parentWidget()
    assert tab.width() <= area.viewport().width()
    label = tab.warningsLabel
    assert label.text().endswith("…") and label.toolTip() == warning
    assert label.fontMetrics().horizontalAdvance(label.text()) <= tab.width()
    assert tab.warnings() == (warning,)
