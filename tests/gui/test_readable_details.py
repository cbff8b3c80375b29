"""Small things a learner read wrong or could not read: a green "0/0 rows agree", an empty
one-epoch chart, peak labels on each other, cut columns and tabs, a legend over the cells."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QStyle, QWidget

from tests.edits import edited
from tests.gui.helpers import run_to_end
from tests.gui.test_layout import settle
from tests.gui.test_presenting_layout import arrange

WRAP = int(Qt.TextFlag.TextWordWrap)
#: The application's own text size (gui.shell.style.apply_app_style).
APP_FONT_PT = 10


@pytest.fixture
def measured(window, qtbot):
    result = run_to_end(qtbot, window)
    yield window, result
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


def test_no_predicted_class_is_never_a_green_0_of_0_rows(measured):
    """BERT's hidden states have no class: its chart said "0/0 rows agree" in green."""
    from autocast_explorer.gui.shell import style

    window, result = measured
    hidden = edited(
        result.agreement, rows=0, agree=0, no_argmax_reason="the output is hidden states"
    )
    window.show_result(edited(result, agreement=hidden))
    title = window.agreementPlot.drawn()["title"]
    assert "no predicted class" in title
    assert "0/0" not in title and "rows agree" not in title
    assert f"color:{style.OK}'><b>no predicted class" not in title
    window.show_result(result)
    agreed = window.agreementPlot.drawn()["title"]
    assert f"{result.agreement.agree}/{result.agreement.rows} rows agree" in agreed


def test_one_epoch_is_a_mark_on_the_chart_and_one_epoch_in_words(qtbot):
    from autocast_explorer.core.data.summary import epochs_text
    from autocast_explorer.gui.charts.epoch_accuracy_chart import EpochAccuracyChart

    assert (epochs_text(1), epochs_text(20), epochs_text(0)) == ("1 epoch", "20 epochs", "0 epochs")
    chart = EpochAccuracyChart()
    qtbot.addWidget(chart)
    chart.show()
    chart.add_epoch(1, 0.9, 0.875, "bfloat16")
    assert chart.drawn() == {"plain": [(1.0, 90.0)], "autocast": [(1.0, 87.5)]}
    # A single point draws no line: each epoch is a mark of its own.
    for item in (chart._plain, chart._auto):
        assert item.opts["symbol"] is not None
        assert len(item.scatter.points()) == 1 and item.scatter.isVisible()


def test_equal_peaks_keep_their_labels_apart(qtbot):
    """Without native bfloat16 its peak is float32's: the two labels were drawn on each other."""
    from autocast_explorer.core.sweeps.roofline import build_roofline
    from autocast_explorer.gui.charts.roofline_chart import RooflineChart

    roofline = build_roofline("bfloat16", 2, [])
    fp32, bf16 = roofline.peaks.values()
    equal = edited(roofline, peaks={"float32": fp32, "bfloat16": edited(bf16, gflops=fp32.gflops)})
    chart = RooflineChart()
    qtbot.addWidget(chart)
    chart.resize(500, 360)
    chart.show()
    chart.show_roofline(equal, "bfloat16")
    settle()
    labels = [line.label for line in chart._peaks if line.isVisible()]
    assert len(labels) == 2
    first, second = (label.sceneBoundingRect() for label in labels)
    assert first.isValid() and second.isValid()
    assert not first.intersects(second)


def test_native_support_is_no_not_emulated(measured):
    """The table said "no (emulated)" where nothing was emulated: what ran is its own row."""
    window, result = measured
    plain_cpu = edited(result.environment, cpu_flags=("avx2", "fma"))
    window.show_result(edited(result, environment=plain_cpu))
    tab = window.findChild(QWidget, "hardwareTab")
    rows = {
        tab.table.item(r, 0).text(): tab.table.item(r, 1).text()
        for r in range(tab.table.rowCount())
    }
    assert rows["Native bf16"] == "no"
    assert "emulat" not in " ".join(rows.values())


@pytest.mark.parametrize(("size", "scale"), [((1024, 640), 1.5), ((1280, 800), 1.0)])
def test_the_dtype_legend_sits_under_the_cells(measured, size, scale):
    window, _result = measured
    arrange(window, size, scale, True)
    window.resultTabs.setCurrentWidget(window.overview)
    settle(window)
    plot = window.dtypePlot.getPlotItem()
    legend = window.dtypePlot._legend
    assert window.dtypePlot.legend_entries() == ["float32", "bfloat16"]
    cells = plot.getViewBox().sceneBoundingRect()
    assert not legend.sceneBoundingRect().intersects(cells)
    assert legend.sceneBoundingRect().bottom() <= window.dtypePlot.height()


def test_thirteen_tabs_fit_at_1280_px(measured):
    """At 1280×800 without the Lessons panel every tab shows its whole name (Hardware was
    cut to "H" behind the scroll arrows; Plan is the thirteenth)."""
    from PySide6.QtWidgets import QApplication

    window, _result = measured
    # The text at the size the application sets (10 pt; the test platform's default is less).
    arrange(window, (1280, 800), APP_FONT_PT / QApplication.font().pointSizeF(), False)
    bar = window.resultTabs.tabBar()
    assert bar.count() == 13
    assert bar.sizeHint().width() <= bar.width()
    for i in range(bar.count()):
        box = bar.tabRect(i)
        assert box.left() >= 0 and box.right() <= bar.width(), bar.tabText(i)
        text = bar.fontMetrics().horizontalAdvance(bar.tabText(i))
        assert box.width() > text, bar.tabText(i)


@pytest.mark.parametrize(("size", "scale"), [((1024, 640), 1.5), ((1280, 800), 1.0)])
def test_the_op_names_and_the_autocast_columns_are_readable(measured, size, scale):
    from autocast_explorer.gui.features.experiment.layer_table import COLUMNS, COMPUTE_COLUMN

    window, _result = measured
    arrange(window, size, scale, True)
    trace = window.opTraceView
    window.resultTabs.setCurrentWidget(trace)
    settle(window)
    table = trace.opsTable
    op = table.horizontalHeader().sectionSize(2)
    assert op >= table.sizeHintForColumn(2) > 0  # the op name is 30 px no more
    layers = window.layerTable
    window.resultTabs.setCurrentWidget(layers)
    settle(window)
    header, view = layers.horizontalHeader(), layers.viewport().width()
    autocast = COLUMNS.index("Autocast (in → out)")
    # The layer, then both modes' dtypes, whole in the tab before the kind and the shape.
    assert [header.logicalIndex(v) for v in range(3)] == [0, 3, autocast]
    assert header.sectionPosition(autocast) + header.sectionSize(autocast) <= view
    # Beside the Lessons panel, at 1280 px and at 1024 px with 150% text, the "computed in"
    # sentence wraps in the room left: no sideways scroll to read it (at 150% the in → out
    # columns wrap after their arrows to leave it that room).
    compute_right = header.sectionPosition(COMPUTE_COLUMN) + header.sectionSize(COMPUTE_COLUMN)
    assert compute_right <= view
    assert header.sectionSize(COMPUTE_COLUMN) >= layers.fontMetrics().averageCharWidth() * 24
    for row in range(layers.rowCount()):  # every row as tall as its wrapped cells
        assert layers.rowHeight(row) >= layers.sizeHintForRow(row) > 0
    # An in → out cell breaks after its arrow, if at all: "float32 →" over "bfloat16", never
    # a line with the arrow alone.
    metrics = layers.fontMetrics()
    text_margin = layers.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
    for column in (3, autocast):
        room = QRect(0, 0, header.sectionSize(column) - 2 * text_margin, 100_000)
        for row in range(layers.rowCount()):
            text = layers.item(row, column).text()
            # rounded: at 10 pt a line's box is 16 px where lineSpacing is 15 (two lines read
            # 2.13, three 3.2)
            box = metrics.boundingRect(room, WRAP, text).height()
            assert round(box / metrics.lineSpacing()) <= 2, (text, header.sectionSize(column))
    # A title in a narrow column wraps over more lines and the header grows to hold them.
    margin = 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    for column in (3, autocast, COMPUTE_COLUMN):
        title = layers.horizontalHeaderItem(column).text()
        room = QRect(0, 0, header.sectionSize(column) - margin, 100_000)
        lines = header.fontMetrics().boundingRect(room, WRAP, title).height()
        assert lines + margin <= header.height(), title
        assert header.sectionSize(column) >= header.fontMetrics().horizontalAdvance("(in → out)")
    assert layers.rows()[0][4] == layers.item(0, autocast).text()  # rows() keep their order


def test_the_training_summary_wraps_inside_its_pane(measured):
    window, _result = measured
    arrange(window, (1024, 640), 1.0, True)
    view = window.findChild(QWidget, "trainingView")
    window.resultTabs.setCurrentWidget(view)
    summary = view.summary
    summary.setText(
        "Training (60 steps, adam, lr 0.001, cross_entropy loss, same initialisation and "
        "batches): saved for backward: float32 8.71 MB (12 tensors), autocast 4.37 MB "
        "(18 tensors), ratio 0.50"
    )
    settle(window)
    area = summary.parentWidget().parentWidget()
    assert summary.width() <= area.viewport().width()
    assert summary.height() >= summary.heightForWidth(summary.width()) > 0
