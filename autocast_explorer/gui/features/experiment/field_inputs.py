"""A config field's input, label and two-way binding, made from the field's one definition.

A field whose spec has a Control (core/experiment/config_parts.py) needs no code here: its kind
(config_fields.field_kind: bool, int, float, choice, a list of ints) picks the input, the
Control gives the label, tooltip, range, steps, suffix, the text shown for None and the
choices' words, the rule gives the bounds and the choices, and `field_binding` reads and writes
it. The panel only places the rows (controls.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_fields import (
    Control,
    FieldSpec,
    Kind,
    field_kind,
    field_spec,
    input_range,
)
from autocast_explorer.core.experiment.config_rules import parse_widths
from autocast_explorer.gui.features.experiment.bindings import Binding

#: The objectName ending of each kind's input ("batchSpin", "dtypeCombo", "scalerCheck").
ENDINGS: dict[Kind, str] = {
    "bool": "Check",
    "int": "Spin",
    "float": "Spin",
    "choice": "Combo",
    "ints": "Edit",
}
#: QSpinBox holds a C int.
INT_TOP = 2**31 - 1
FLOAT_TOP = 1e12


def config_field(name: str) -> dataclasses.Field[Any]:
    """ExperimentConfig's field `name` (KeyError for an unknown one)."""
    return ExperimentConfig.__dataclass_fields__[name]


def control_of(name: str) -> Control:
    """The field's Control (ValueError when its spec gives none: no input is made from it)."""
    control = field_spec(config_field(name)).control
    if control is None:
        raise ValueError(f"config field {name!r} has no control in its spec")
    return control


def has_control(name: str) -> bool:
    return field_spec(config_field(name)).control is not None


def spec_of(name: str) -> FieldSpec:
    return field_spec(config_field(name))


def object_name(name: str, prefix: str = "") -> str:
    """The input's objectName: the Control's, else prefix + the field in camel case + the kind's
    ending ('minTimeSpin', 'cnnChannelsEdit')."""
    control = control_of(name)
    if control.name:
        return control.name
    words = name.split("_")
    camel = (
        "".join(w.title() for w in words)
        if prefix
        else words[0] + "".join(w.title() for w in words[1:])
    )
    return prefix + camel + ENDINGS[field_kind(config_field(name))]


def make_input(name: str, prefix: str = "", tip: str = "") -> QWidget:
    """The input of config field `name`, from its spec (`tip`: instead of the spec's)."""
    field = config_field(name)
    control, kind = control_of(name), field_kind(field)
    widget: QWidget
    if kind == "bool":
        widget = QCheckBox(control.label)
    elif kind == "choice":
        widget = _combo(name, control)
    elif kind == "ints":
        widget = QLineEdit()
        widget.setPlaceholderText(control.placeholder)
    elif kind in ("int", "float"):
        widget = _spin(field, control, kind)
    else:
        raise TypeError(f"config field {name!r}: no input for a {kind} value")
    widget.setObjectName(object_name(name, prefix))
    widget.setToolTip(tip or spec_of(name).tooltip())
    return widget


def _combo(name: str, control: Control) -> QComboBox:
    rule = spec_of(name).rule
    words = dict(control.items)
    combo = QComboBox()
    for value in rule.bounds()["enum"] if rule else ():
        combo.addItem(words.get(value, value), value)
    combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return combo


def _spin(field: dataclasses.Field[Any], control: Control, kind: Kind) -> QWidget:
    low, high = input_range(field)
    spin: QSpinBox | QDoubleSpinBox
    if kind == "int":
        spin = QSpinBox()
        spin.setRange(int(low), int(min(high if high is not None else INT_TOP, INT_TOP)))
        spin.setAccelerated(True)
    else:
        spin = QDoubleSpinBox()
        spin.setDecimals(control.decimals)
        spin.setRange(low, high if high is not None else FLOAT_TOP)
        spin.setSingleStep(control.step)
    spin.setSuffix(control.suffix)
    spin.setSpecialValueText(control.shown_none())
    return spin


def make_label(name: str, buddy: QWidget) -> QLabel | None:
    """The row's label (its mnemonic's buddy `buddy`); None for a check box, which says it."""
    if field_kind(config_field(name)) == "bool":
        return None
    label = QLabel(control_of(name).label)
    label.setBuddy(buddy)
    label.setToolTip(buddy.toolTip())
    return label


def edited_signal(widget: QWidget) -> SignalInstance:
    """The signal an input emits when edited."""
    if isinstance(widget, QSpinBox | QDoubleSpinBox):
        return widget.valueChanged
    if isinstance(widget, QComboBox):
        return widget.currentIndexChanged
    if isinstance(widget, QCheckBox):
        return widget.toggled
    if isinstance(widget, QLineEdit):
        return widget.textChanged
    raise TypeError(f"no edited signal for {type(widget).__name__}")


def read_value(name: str, widget: QWidget) -> Any:
    """The field's value as the input shows it (ConfigError: a list that does not parse); a
    number input at 0 stands for None where the field's default is None."""
    if isinstance(widget, QSpinBox | QDoubleSpinBox):
        value = widget.value()
        return (value or None) if config_field(name).default is None else value
    if isinstance(widget, QComboBox):
        return widget.currentData()
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, QLineEdit):
        return parse_widths(widget.text(), name)
    raise TypeError(f"no binding for {type(widget).__name__}")


def write_value(widget: QWidget, value: Any) -> None:
    """Show `value` in the input (None as 0; a number past a spin box's top at its top)."""
    if isinstance(widget, QSpinBox):
        widget.setValue(min(int(value or 0), widget.maximum()))
    elif isinstance(widget, QDoubleSpinBox):
        widget.setValue(float(value or 0.0))
    elif isinstance(widget, QComboBox):
        widget.setCurrentIndex(max(widget.findData(value), 0))
    elif isinstance(widget, QCheckBox):
        widget.setChecked(bool(value))
    elif isinstance(widget, QLineEdit):
        widget.setText(",".join(map(str, value)))


def field_binding(name: str, widget: QWidget) -> Binding:
    """One field shown by one input, both ways."""

    def read() -> dict[str, Any]:
        return {name: read_value(name, widget)}

    def write(config: ExperimentConfig) -> None:
        write_value(widget, getattr(config, name))

    return Binding(name, frozenset({name}), read, write, (widget,))
