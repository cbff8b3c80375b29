"""The controls' inputs are made from the config fields' specs: label, tooltip, range, choices
and the two-way binding come from each field's one definition (config_parts.py), and a field
whose spec has a control gets an input, placed and bound, with no code in the panel."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QLabel, QSpinBox, QWidget

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_fields import Control, field_spec, field_specs
from autocast_explorer.core.experiment.families import FAMILIES
from autocast_explorer.gui.features.experiment import controls
from autocast_explorer.gui.features.experiment.controls import ControlsPanel

SPECS = field_specs(ExperimentConfig)


@pytest.fixture
def panel(qtbot) -> ControlsPanel:
    made = ControlsPanel()
    qtbot.addWidget(made)
    return made


def label_of(panel: QWidget, widget: QWidget) -> QLabel:
    (label,) = [w for w in panel.findChildren(QLabel) if w.buddy() is widget]
    return label


def test_every_field_with_a_control_has_a_label_and_a_tooltip():
    with_control = [name for name, spec in SPECS.items() if spec.control is not None]
    assert len(with_control) == 37  # every field the window shows but routes and your model's
    for name in with_control:
        control = SPECS[name].control
        assert control is not None and control.label.strip(), name
        assert len(SPECS[name].tooltip()) > 10, name
    for fam in FAMILIES.values():  # the family pages are made from the specs alone
        assert all(SPECS[p.name].control is not None for p in fam.params), fam.name


def test_each_input_s_label_tooltip_and_name_come_from_its_spec(panel):
    assert set(panel.inputs) == {
        "mode", "steps", "optimizer", "lr", "scaler", "widths", "batch", "seed", "activation",
        "head", "epochs", "dtype", "atol", "rtol", "threads", "min_time", "allow_slow", "topk",
        "input_scale", "input_distribution", "memory_budget_mb", "max_time",
    }  # fmt: skip
    for name, widget in panel.inputs.items():
        spec = SPECS[name]
        assert spec.control is not None
        if name != "min_time":  # its tooltip adds a sentence in training mode
            assert widget.toolTip() == spec.tooltip(), name
        if name not in ("scaler", "allow_slow"):  # a check box says its label itself
            assert label_of(panel, widget).text() == spec.control.label, name
        assert getattr(panel, widget.objectName()) is widget  # controls.batchSpin, as always
    assert label_of(panel, panel.modelCombo).text() == "Mo&del"
    assert panel.modelCombo.toolTip() == SPECS["model"].tooltip()
    assert panel.allowSlowCheck.text() == "Allow slow runs (> 10 s per forward)"


def test_ranges_steps_and_choices_come_from_the_rule_and_the_control(panel):
    assert (panel.batchSpin.minimum(), panel.batchSpin.maximum()) == (1, 1_000_000)
    assert panel.seedSpin.maximum() == 2**31 - 1  # the rule's 2**63-1, at a spin box's top
    assert (panel.stepsSpin.minimum(), panel.stepsSpin.maximum()) == (1, 100_000)
    assert (panel.lrSpin.minimum(), panel.lrSpin.maximum(), panel.lrSpin.decimals()) == (
        1e-5,  # the rule's "> 0", one step of the last decimal above it
        100.0,
        5,
    )
    assert (panel.minTimeSpin.minimum(), panel.minTimeSpin.suffix()) == (0.001, " s")
    assert panel.memoryBudgetSpin.specialValueText() == "auto (½ free RAM)"
    assert panel.threadsSpin.minimum() == 0 and panel.threadsSpin.specialValueText().startswith(
        "auto ("
    )
    mode = panel.modeCombo
    assert [(mode.itemText(i), mode.itemData(i)) for i in range(mode.count())] == [
        ("Inference", "infer"),
        ("Training", "train"),
    ]
    assert [panel.dtypeCombo.itemText(i) for i in range(panel.dtypeCombo.count())] == [
        "bfloat16",
        "float16",
    ]
    image = panel.family.input("image", "cnn")
    assert isinstance(image, QSpinBox) and (image.minimum(), image.maximum()) == (2, 4096)
    assert image.toolTip() == "Square image side in pixels (default 32)."


def test_a_field_no_box_lists_is_placed_and_bound_without_panel_code(monkeypatch, qtbot):
    """topk left out of the layout still gets its input, at the end of its part's box
    (under Advanced for measurement), bound both ways."""
    boxes = dict(controls.BOXES)
    boxes["Measurement"] = tuple(r for r in boxes["Measurement"] if r != "topk")
    monkeypatch.setattr(controls, "BOXES", boxes)
    panel = ControlsPanel()
    qtbot.addWidget(panel)
    assert controls.box_rows()["Measurement"][-1] == "topk"
    topk = panel.topkSpin
    assert isinstance(topk, QSpinBox) and topk in panel._advanced_widgets
    topk.setValue(7)
    assert panel.state.config.topk == 7
    panel.state.set(panel.state.config.replace(topk=3))
    assert topk.value() == 3


def test_a_control_added_to_a_field_s_spec_is_an_input_of_the_panel(monkeypatch, qtbot):
    """input_kind has no input today; a Control in its spec is all it takes to get one."""
    field = ExperimentConfig.__dataclass_fields__["input_kind"]
    spec = dataclasses.replace(field_spec(field), control=Control("Input &kind", "How x is made."))
    monkeypatch.setattr(field, "metadata", MappingProxyType({"autocast_explorer.spec": spec}))
    field_specs.cache_clear()
    try:
        panel = ControlsPanel()
        qtbot.addWidget(panel)
        combo = panel.inputKindCombo
        assert isinstance(combo, QComboBox) and combo.toolTip() == "How x is made."
        assert label_of(panel, combo).text() == "Input &kind"
        assert [combo.itemData(i) for i in range(combo.count())] == ["auto", "float", "tokens"]
        assert "input_kind" not in panel.unbound_fields()
        combo.setCurrentIndex(combo.findData("tokens"))
        assert panel.state.config.input_kind == "tokens"
        panel.state.set(panel.state.config.replace(input_kind="float"))
        assert combo.currentData() == "float"
    finally:
        monkeypatch.undo()
        field_specs.cache_clear()


def test_an_edit_reads_through_the_spec_s_kind(panel):
    panel.threadsSpin.setValue(0)
    assert panel.state.config.threads is None  # 0 stands for None where the default is None
    panel.maxTimeSpin.setValue(2.5)
    assert panel.state.config.max_time == 2.5
    panel.family.modelCombo.setCurrentIndex(panel.family.modelCombo.findData("cnn"))
    channels = panel.family.input("channels", "cnn")
    channels.setText("1,4,8")  # type: ignore[attr-defined]
    assert panel.state.config.channels == (1, 4, 8)
    assert isinstance(panel.atolSpin, QDoubleSpinBox) and panel.atolSpin.maximum() == 1e3
