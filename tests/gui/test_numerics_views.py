"""The numerics tabs draw the result's own numbers: per-layer error, flips, margins, op trace."""

from __future__ import annotations

import math

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QAbstractButton, QComboBox, QFileDialog, QTableWidget, QWidget

from autocast_explorer.core.experiment.agreement import compare_logits
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.numerics.layer_error import LayerError
from autocast_explorer.gui.charts import formats
from autocast_explorer.gui.charts.flip_chart import NO_FLIP_COLOR
from autocast_explorer.gui.features.experiment.layer_table import COLUMNS, ERROR_COLUMNS
from autocast_explorer.gui.shell import style
from tests.core.test_flips import constructed
from tests.edits import edited
from tests.gui.helpers import run_to_end


def tab_titles(window) -> list[str]:
    tabs = window.resultTabs
    return [tabs.tabText(i) for i in range(tabs.count())]


def test_the_numerics_tabs_are_in_the_window(window):
    titles = tab_titles(window)
    for title in ("Layer error", "Agreement", "Op trace", "Ops"):
        assert title in titles
    for name in ("errorPlot", "flipRatePlot", "flipsTable", "opsTable", "addedTable"):
        assert window.findChild(QWidget, name) is not None, name
    assert isinstance(window.findChild(QWidget, "opsPolicyTable"), QTableWidget)
    views = (window.errorView, window.agreementView, window.opTraceView, window.opsPanel)
    checked = 0
    for view in views:
        assert view.toolTip() or window.resultTabs.tabToolTip(window.resultTabs.indexOf(view))
        inputs = view.findChildren(QAbstractButton) + view.findChildren(QComboBox)
        charts_and_tables = view.findChildren(pg.PlotWidget) + view.findChildren(QTableWidget)
        for widget in inputs + charts_and_tables:
            if isinstance(widget.parent(), QComboBox | QTableWidget):  # Qt-internal parts
                continue
            assert widget.toolTip().strip(), widget.objectName() or type(widget).__name__
            checked += 1
    assert checked >= 11  # 2 charts, 4 tables, 2 combos, a checkbox, 2 buttons


def test_error_chart_and_layer_table_show_each_layers_error(window, qtbot):
    result = run_to_end(qtbot, window)
    errors = [layer.error for layer in result.layers]
    assert all(e is not None and math.isfinite(e.sqnr_db) for e in errors)

    drawn = window.errorPlot.drawn()
    assert drawn["heights"] == [e.sqnr_db for e in errors]
    assert drawn["labels"] == [f"{e.sqnr_db:.1f} dB" for e in errors]
    assert drawn["ticks"] == [layer.name for layer in result.layers]
    assert drawn["colors"] == [
        style.dtype_color(layer.autocast.out_dtype) for layer in result.layers
    ]
    assert drawn["metrics"] == [
        f"max |err| {e.max_abs:.3g}\nmean rel {e.mean_rel:.3g}\ncos {e.cosine:.7f}" for e in errors
    ]
    worst = min(result.layers, key=lambda layer: layer.error.sqnr_db)
    assert f"lowest: <b>{worst.name} {worst.error.sqnr_db:.1f} dB</b>" in drawn["title"]

    # Hovering the first bar gives every metric of fc1.
    plot = window.errorPlot
    view = plot.getPlotItem().getViewBox()
    plot.scene().sigMouseMoved.emit(view.mapViewToScene(QPointF(0.0, errors[0].sqnr_db / 2)))
    tip = plot.toolTip()
    assert tip.startswith(f"{result.layers[0].name} (Linear), autocast output bfloat16")
    assert f"max |error|: {errors[0].max_abs:.3g}" in tip
    assert f"mean relative error: {errors[0].mean_rel:.3g}" in tip
    assert f"cosine similarity: {errors[0].cosine:.7f}" in tip

    # The Layers tab: four more columns with the same numbers.
    table = window.layerTable
    assert [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())] == list(
        COLUMNS + ERROR_COLUMNS
    )
    assert table.error_values() == [(e.max_abs, e.mean_rel, e.sqnr_db, e.cosine) for e in errors]
    for row, e in zip(table.rows(), errors, strict=True):
        max_abs, mean_rel, sqnr, cosine = row[len(COLUMNS) :]
        assert float(max_abs) == pytest.approx(e.max_abs, rel=5e-3)
        assert float(mean_rel) == pytest.approx(e.mean_rel, rel=5e-3)
        assert float(sqnr) == pytest.approx(e.sqnr_db, abs=0.05)
        assert float(cosine) == pytest.approx(e.cosine, abs=5e-8)


def test_identical_missing_and_overflowed_errors_are_named_not_drawn_as_numbers(window, qtbot):
    result = run_to_end(qtbot, window)
    identical = LayerError(
        max_abs=0.0,
        mean_abs=0.0,
        mean_rel=0.0,
        sqnr_db=math.inf,
        cosine=1.0,
        identical=True,
        numel=128,
    )
    overflowed = LayerError(
        max_abs=math.inf,
        mean_abs=math.inf,
        mean_rel=math.nan,
        sqnr_db=math.nan,
        cosine=math.nan,
        identical=False,
        numel=32,
        nonfinite=5,
    )
    layers = list(result.layers)
    assert len(layers) == 3
    layers[0] = layers[0].model_copy(update={"error": identical})
    layers[1] = layers[1].model_copy(update={"error": None})
    layers[2] = layers[2].model_copy(update={"error": overflowed})
    window.show_result(edited(result, layers=tuple(layers)))

    drawn = window.errorPlot.drawn()
    assert drawn["labels"] == ["∞", "n/a", "overflow"]
    assert drawn["heights"][0] > 0  # ∞ stands tall
    assert drawn["heights"][1:] == [0.0, 0.0]
    assert "5 values overflowed to inf/NaN" in drawn["title"]
    sqnr_col = len(COLUMNS) + ERROR_COLUMNS.index("SQNR (dB)")
    rows = window.layerTable.rows()
    assert rows[0][sqnr_col] == "∞ (identical)"
    assert rows[1][len(COLUMNS) :] == (formats.NOT_MEASURED,) * len(ERROR_COLUMNS)
    assert rows[2][sqnr_col] == "NaN (overflow)"


def test_flipped_rows_and_flip_rate_on_a_constructed_case(window, qtbot):
    """20 rows, float32 margins 0.015 … 0.205; autocast moves 0.05 from class 0 to class 1."""
    result = run_to_end(qtbot, window)
    plain, auto = constructed()
    agreement = compare_logits(plain, auto, atol=0.01, rtol=0.0, topk=2)
    case = edited(result, agreement=agreement)
    window.show_result(case)
    view = window.agreementView

    assert [f.row for f in agreement.flips] == [0, 1, 3, 5, 8, 11, 13, 15, 17]  # core's answer
    assert view.flips_values() == [
        (f.row, f.plain_class, f.autocast_class, f.margin) for f in agreement.flips
    ]
    assert view.flips_rows() == [(str(f.row), "0", "1", f"{f.margin:.4g}") for f in agreement.flips]
    assert view.flipsLabel.text() == "<b>Flipped rows</b>: 9"

    chart = window.flipRatePlot.drawn()
    bins = agreement.margin_bins
    assert chart["heights"] == [100 * b.rate for b in bins] == [100] * 4 + [50] + [0] * 5
    assert chart["labels"] == [f"{b.flips}/{b.rows}" for b in bins]
    assert chart["colors"] == [style.BAD if b.flips else NO_FLIP_COLOR for b in bins]
    assert chart["ticks"] == [f"{b.high:.2g}" for b in bins]
    assert "9 of 20 rows flipped" in chart["title"]
    assert "2 in the smallest-margin bin" in chart["title"]

    assert view.top1Card.value.text() == "11/20 rows"
    assert view.topkCard.value.text() == "top-2: 20/20"
    assert view.allcloseCard.value.text() == "no"
    assert "atol 0.01, rtol 0" in view.allcloseCard.detail.text()

    window.clear_results()
    assert view.flips_rows() == []
    assert window.flipRatePlot.drawn()["heights"] == []


def test_a_real_run_fills_the_agreement_tab(window, qtbot):
    window.set_config(window.current_config().replace(topk=3))
    result = run_to_end(qtbot, window)
    a = result.agreement
    view = window.agreementView
    assert view.top1Card.value.text() == f"{a.agree}/{a.rows} rows"
    assert view.topkCard.value.text() == f"top-3: {a.topk.contains}/{a.rows}"
    assert view.allcloseCard.value.text() == ("yes" if a.allclose else "no")
    assert f"atol {a.atol:g}, rtol {a.rtol:g}" in view.allcloseCard.detail.text()
    assert window.flipRatePlot.drawn()["heights"] == [100 * b.rate for b in a.margin_bins]
    assert len(view.flips_rows()) == len(a.flips) == a.rows - a.agree


def test_op_trace_highlights_exactly_the_casts(window, qtbot):
    result = run_to_end(qtbot, window)
    trace = result.op_trace
    view = window.opTraceView
    records = list(trace.records)
    assert 0 < trace.casts.count < len(trace.autocast)

    rows = view.op_rows()
    assert [(r[1], r[2], r[4]) for r in rows] == [
        (rec.mode, rec.op, formats.shape(rec.shape)) for rec in records
    ]
    assert view.highlighted() == [rec.cast for rec in records]
    assert [r[5] for r in rows] == [f"{rec.bytes:,}" if rec.cast else "" for rec in records]
    cast_row = rows[[rec.cast for rec in records].index(True)]
    assert cast_row[3] == "fp32 → bf16"
    # a parameter's cast names it by its path in the model, and its class
    index = next(i for i, rec in enumerate(records) if rec.source == "fc1.weight")
    tip = view.opsTable.item(index, 2).toolTip()
    assert tip.endswith(", of the parameter fc1.weight (Linear.weight)")

    assert view.castCountLabel.text() == str(trace.casts.count)
    assert view.castBytesLabel.text().startswith(f"{trace.casts.bytes:,} B")
    inference = trace.casts_by_grad_mode["inference_mode"]
    sentence = view.gradModeLabel.text()
    assert sentence.startswith(f"Under torch.inference_mode the same {inference.count} casts")
    assert all(op in sentence for op in inference.by_op)

    view.castsOnlyCheck.setChecked(True)
    shown = view.op_rows(visible_only=True)
    assert len(shown) == trace.casts.count
    assert view.shownLabel.text() == f"{trace.casts.count} of {len(records)} ops shown"
    view.castsOnlyCheck.setChecked(False)
    view.modeCombo.setCurrentText("plain only")
    assert [r[1] for r in view.op_rows(visible_only=True)] == ["plain"] * len(trace.plain)

    added = {row[0]: row[1:] for row in view.added_rows()}
    for count in trace.counts:
        assert added[count.op] == (str(count.plain), str(count.autocast), f"{count.added:+d}")
    assert view.added_rows()[0][0] in trace.casts.by_op  # the casts are what autocast added


def test_input_scale_and_distribution_explain_themselves_and_change_the_numbers(window, qtbot):
    for name, words in (("inputScaleSpin", "SQNR"), ("distributionCombo", "Layer error")):
        assert words in window.findChild(QWidget, name).toolTip()
    first = run_to_end(qtbot, window)
    before = window.errorPlot.drawn()["heights"]

    window.controls.advancedButton.setChecked(True)
    window.controls.inputScaleSpin.setValue(1000.0)
    window.controls.distributionCombo.setCurrentText("uniform")
    second = run_to_end(qtbot, window)
    assert (second.config.input_scale, second.config.input_distribution) == (1000.0, "uniform")

    after = window.errorPlot.drawn()
    assert after["heights"] == [layer.error.sqnr_db for layer in second.layers]
    assert after["heights"] != before
    assert "input uniform × 1000" in after["title"]
    a = second.agreement
    assert window.agreementView.top1Card.value.text() == f"{a.agree}/{a.rows} rows"
    assert f"max |diff| {formats.g3(a.max_abs_diff)}" in (
        window.agreementView.allcloseCard.detail.text()
    )
    assert a.max_abs_diff != first.agreement.max_abs_diff
    assert window.layerTable.error_values()[0][2] == second.layers[0].error.sqnr_db


def test_a_saved_result_shows_the_same_numerics(window, qtbot):
    result = run_to_end(qtbot, window)
    drawn = window.errorPlot.drawn()
    highlighted = window.opTraceView.highlighted()
    loaded = ExperimentResult.from_json(result.to_json())
    window.clear_results()
    assert window.opTraceView.op_rows() == []
    window.show_result(loaded)
    assert window.errorPlot.drawn()["heights"] == drawn["heights"]
    assert window.opTraceView.highlighted() == highlighted
    assert window.opTraceView.castCountLabel.text() == str(result.op_trace.casts.count)


def test_export_the_error_chart_as_svg(window, qtbot, tmp_path, monkeypatch):
    result = run_to_end(qtbot, window)
    qtbot.wait(200)  # axes re-laid out for the new ticks, as after a person's click
    target = tmp_path / "error.svg"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), ""))
    )
    action = window.exportActions["error"]
    assert action.isEnabled()
    action.trigger()
    text = target.read_text(encoding="utf-8")
    assert "<svg" in text
    assert f"{result.layers[0].error.sqnr_db:.1f} dB" in text
