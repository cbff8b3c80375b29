"""The window with every model family: the selector, its inputs, the charts with many layers,
and an autocast forward that raises shown as a finding, not a failed run."""

from __future__ import annotations

import threading

import torch
from PySide6.QtWidgets import QComboBox, QLineEdit, QSpinBox, QWidget

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import FAMILIES
from autocast_explorer.gui.charts.layer_ticks import MAX_NAMED, layer_ticks
from autocast_explorer.gui.features.experiment.layer_table import NOT_RUN
from tests.autocast_failure import RaisesUnderAutocast
from tests.gui.helpers import run_to_end, tiny_gru


def choose_model(window, qtbot, name: str) -> None:
    combo = window.findChild(QComboBox, "modelCombo")
    combo.setFocus()
    combo.setCurrentIndex(combo.findData(name))
    qtbot.waitUntil(lambda: window.current_config().model == name, timeout=2000)


def test_model_combo_switches_the_inputs(window, qtbot):
    combo = window.findChild(QComboBox, "modelCombo")
    assert combo is not None and combo.currentData() == "mlp"
    assert [combo.itemData(i) for i in range(combo.count())] == [*FAMILIES, "user"]
    widths = window.controls.widthsEdit
    assert widths.isVisible()
    choose_model(window, qtbot, "cnn")
    assert not widths.isVisible()
    channels = window.findChild(QLineEdit, "cnnChannelsEdit")
    assert channels.isVisible() and channels.text() == "3,32,64"
    channels.setText("3,8,16")
    window.findChild(QSpinBox, "cnnImageSpin").setValue(16)
    config = window.current_config()
    assert (config.model, config.channels, config.image) == ("cnn", (3, 8, 16), 16)
    choose_model(window, qtbot, "rnn")
    assert not window.controls.activationCombo.isVisible()
    assert window.findChild(QComboBox, "rnnCellCombo").isVisible()
    assert not channels.isVisible()
    choose_model(window, qtbot, "mlp")
    assert widths.isVisible() and window.current_config().widths == (32, 16, 4)


def test_a_bad_family_value_is_shown_inline_naming_it(window, qtbot):
    choose_model(window, qtbot, "transformer")
    window.findChild(QSpinBox, "transformerHeadsSpin").setValue(5)
    qtbot.waitUntil(lambda: "familyError" in {w.objectName() for w in _visible_errors(window)})
    error = window.findChild(QWidget, "familyError")
    assert error.text().startswith("heads: d_model 64 is not divisible by 5 heads")
    assert not window.runButton.isEnabled()
    window.findChild(QSpinBox, "transformerHeadsSpin").setValue(8)
    qtbot.waitUntil(window.runButton.isEnabled)


def _visible_errors(window) -> list[QWidget]:
    return [w for w in window.findChildren(QWidget) if w.objectName().endswith("Error")
            and w.isVisible()]  # fmt: skip


def test_a_cnn_run_draws_its_layers(window, qtbot):
    window.set_config(
        ExperimentConfig(model="cnn", channels=(3, 8, 16), image=16, batch=4, min_time=0.02)
    )
    result = run_to_end(qtbot, window)
    assert result.config.model == "cnn"
    kinds = {layer.kind: layer.autocast.out_dtype for layer in result.layers}
    assert kinds["Conv2d"] == "bfloat16" and kinds["BatchNorm2d"] == "bfloat16"
    cells = window.dtypePlot.cells()
    assert len(cells) == 2 * len(result.layers)
    assert [c.layer for c in cells[::2]] == [la.name for la in result.layers]
    assert [r[1] for r in window.layerTable.rows()] == [la.kind for la in result.layers]
    assert "CNN 3→8→16 · image 16" in window.overview.header.details.text()


def test_a_transformer_without_fast_path_stays_readable_with_dozens_of_layers(window, qtbot):
    window.set_config(
        ExperimentConfig(
            model="transformer", d_model=16, heads=2, seq=4, ff=32, depth=4, fast_path=False,
            batch=2, min_time=0.02,
        )
    )  # fmt: skip
    result = run_to_end(qtbot, window)
    names = [la.name for la in result.layers]
    assert len(names) == 4 * 9 + 2  # each layer and its 8 modules, then pool and fc
    ticks = window.dtypePlot.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [label for _slot, label in ticks] == [
        "encoder1", "encoder2", "encoder3", "encoder4", "pool",
    ]  # fmt: skip
    assert layer_ticks(names) == ticks and len(ticks) <= MAX_NAMED
    assert window.dtypePlot.cell_labels() == []  # too narrow for text: colors and tooltips
    encoder = window.dtypePlot.cells()[1]
    assert (encoder.layer, encoder.mode, encoder.out_dtype) == ("encoder1", "autocast", "float32")
    assert len(window.layerTable.rows()) == len(names)
    details = window.overview.header.details.text()
    assert "fast path was turned off" in details and "returned float32" in details


def test_a_failing_autocast_forward_is_the_headline_not_a_failed_run(window, qtbot, monkeypatch):
    mlp = FAMILIES["mlp"]
    normal = mlp.build_model
    failing = [True]

    def build_model(config: ExperimentConfig) -> torch.nn.Module:
        if not failing[0]:
            return normal(config)
        torch.manual_seed(config.seed)
        model = torch.nn.Sequential()
        model.add_module("fc1", torch.nn.Linear(config.widths[0], config.widths[-1]))
        model.add_module("refuses", RaisesUnderAutocast())
        return model.eval()

    monkeypatch.setattr(mlp, "build_model", build_model)
    failed: list[str] = []
    window.experimentFailed.connect(failed.append)
    result = run_to_end(qtbot, window)
    assert failed == []
    assert "could not create a primitive descriptor" in result.autocast_error
    headline = window.overview.header.headline.text()
    assert headline.startswith("Bfloat16 autocast could not run this model here")
    finding = window.findChild(QWidget, "autocastErrorLabel")
    assert finding.isVisible()
    assert "could not create a primitive descriptor for the test layer" in finding.text()
    assert "only float32 was timed" in finding.text()
    drawn = window.latencyPlot.drawn()
    assert drawn["heights"] == [result.plain.median_ms]
    assert "raised an error" in drawn["ticks"][-1]
    rows = window.layerTable.rows()
    assert rows[0][4] == "float32 → bfloat16" and rows[1][4] == NOT_RUN
    assert [c.out_dtype for c in window.dtypePlot.cells()][-1] == "did not run"
    assert window.agreementPlot.drawn()["counts"] == []
    # The next run is a normal one again.
    failing[0] = False
    result = run_to_end(qtbot, window)
    assert not result.autocast_error and not finding.isVisible()
    assert window.runButton.isEnabled() and window.runButton.text().startswith("Run")


def test_a_family_preset_sets_the_model_and_its_sweep(window, qtbot):
    window.presets.choose("transformer")
    assert window.findChild(QComboBox, "modelCombo").currentData() == "transformer"
    config = window.current_config()
    assert (config.model, config.d_model, config.heads, config.seq) == ("transformer", 64, 4, 32)
    tab = window.sweeps.sweeps
    assert tab.param() == "seq" and tab.valuesEdit.text() == "16,64,256"
    qtbot.waitUntil(lambda: not tab.sweepError.text())
    choose_model(window, qtbot, "cnn")
    qtbot.waitUntil(lambda: bool(tab.sweepError.text()))
    assert "seq does not apply to --model cnn" in tab.sweepError.text()


def test_a_layer_left_in_float32_without_a_word_is_shown_as_a_finding(qtbot):
    """An LSTM off its listed op (oneDNN off, as on a CPU without a bf16 LSTM kernel)."""
    from autocast_explorer.core.experiment.engine import run_experiment
    from autocast_explorer.core.experiment.fallback import silent_fallbacks
    from autocast_explorer.gui.features.experiment.overview import ResultHeader

    config = ExperimentConfig(
        model="rnn", features=8, hidden=8, seq=3, depth=1, batch=2, min_time=0.02, threads=1
    )
    results = []

    def measure() -> None:  # off the GUI thread, as the window runs torch (DESIGN: OpenMP pools)
        before = torch._C._get_mkldnn_enabled()
        torch._C._set_mkldnn_enabled(False)
        try:
            results.append(run_experiment(config))
        finally:
            torch._C._set_mkldnn_enabled(before)

    worker = threading.Thread(target=measure)
    worker.start()
    worker.join()
    (result,) = results
    (found,) = silent_fallbacks(result)
    header = ResultHeader()
    qtbot.addWidget(header)
    header.show()
    header.show_result(result)
    assert header.finding.isVisible()
    assert f"Finding: {found.headline}." in header.finding.text()
    assert "mkldnn_rnn_layer never ran" in header.finding.text()
    assert not header.headline.text().startswith("Bfloat16 autocast could not run")


def test_a_gru_is_drawn_as_a_mixed_cell_with_what_it_computed_in(window, qtbot):
    """The GRU returns float32 under autocast while its matrix products run in bfloat16: the
    cell keeps the output's color, gains a stripe in bfloat16's, and says both."""
    from autocast_explorer.core.experiment.summary import compute_sentence
    from autocast_explorer.gui.charts.dtype_chart import MODE_ROW
    from autocast_explorer.gui.features.experiment.layer_table import COLUMNS
    from autocast_explorer.gui.shell import style

    window.set_config(tiny_gru(seq=6))
    result = run_to_end(qtbot, window)
    gru = next(la for la in result.layers if la.name == "gru")
    assert gru.autocast.out_dtype == "float32" and gru.autocast.compute.mixed("float32")
    cell = next(c for c in window.dtypePlot.cells() if (c.layer, c.mode) == ("gru", "autocast"))
    assert cell.color == style.dtype_color("float32")
    assert cell.compute_dtype == "bfloat16"
    assert cell.label == "fp32→fp32\nbf16 inside"
    assert cell.compute == gru.autocast.compute.summary("float32")
    assert cell.tooltip.endswith(f"computed in: {cell.compute}")
    # The one stripe drawn sits on that cell, in bfloat16's color; no other cell is mixed.
    assert [(round(x), c) for x, _y, c in window.dtypePlot.drawn_stripes()] == [
        (0, style.dtype_color("bfloat16"))
    ]
    assert window.dtypePlot.drawn_stripes()[0][1] < MODE_ROW["autocast"]
    assert "bfloat16" in window.dtypePlot.legend_entries()
    col = COLUMNS.index("Autocast computed in")
    rows = window.layerTable.rows()
    assert rows[0][col] == compute_sentence(result, gru)
    assert rows[0][col].startswith(f"{gru.autocast.compute.count('addmm', 'bfloat16')} addmm")


def test_a_mixed_cell_whose_ops_mostly_ran_in_its_output_dtype_stripes_the_other_one(qtbot):
    """A float32 layer with one bfloat16 matrix product and four float32 ops is mixed: its
    stripe and second line name bfloat16, never the float32 the cell is already colored by."""
    from autocast_explorer.core.experiment.engine import run_experiment
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.gui.charts.dtype_chart import DtypeChart
    from autocast_explorer.gui.shell import style
    from tests.gui.helpers import TINY

    data = run_experiment(TINY).to_dict()
    first = data["layers"][0]
    first["autocast"].update(
        out="float32",
        compute_dtypes={
            "aten.addmm.default": {"bfloat16": 1},
            "aten.add.Tensor": {"float32": 2},
            "aten.mul.Tensor": {"float32": 2},
        },
    )
    result = ExperimentResult.from_dict(data)
    assert result.layers[0].autocast.compute.dtypes == ("float32", "bfloat16")
    chart = DtypeChart()
    qtbot.addWidget(chart)
    chart.show_result(result)
    cell = next(c for c in chart.cells() if (c.layer, c.mode) == (first["name"], "autocast"))
    assert cell.compute_dtype == "bfloat16"
    assert cell.label == "fp32→fp32\nbf16 inside"
    assert [c for _x, _y, c in chart.drawn_stripes()] == [style.dtype_color("bfloat16")]
