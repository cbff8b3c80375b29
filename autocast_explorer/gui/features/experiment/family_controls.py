"""The model selector and each family's parameters, built from core's family descriptions.

`modelCombo` picks the family; below it a stacked page per family holds one input per
parameter core declares (core/experiment/families/), so a new family needs no code here.
The MLP's own inputs (widths, layer editor) stay where they always were, in the controls panel;
the panel shows or hides the shared inputs (widths, activation) as the family uses them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_rules import parse_widths
from autocast_explorer.core.experiment.families import FAMILIES, USER, FamilyParam
from autocast_explorer.gui.features.experiment.bindings import Binding
from autocast_explorer.gui.features.experiment.user_model_page import (
    USER_PAGE_FIELDS,
    UserModelPage,
)

#: modelCombo's data for "Your model…" (the config's `model` is then the typed spec).
USER_ITEM = "user"

MODEL_TIP = (
    "Which model to measure. mlp is the tutorial's model; cnn, transformer and rnn show how "
    "autocast treats convolutions, attention and recurrent layers on this CPU. Your model… "
    "runs a Hugging Face, torchvision or timm architecture, or your own factory."
)
LABELS = {
    "channels": "C&hannels",
    "image": "&Image side",
    "classes": "C&lasses",
    "d_model": "d_&model",
    "heads": "H&eads",
    "seq": "Se&quence",
    "depth": "De&pth",
    "ff": "&Feed-forward",
    "fast_path": "",
    "cell": "&Cell",
    "features": "&Features",
    "hidden": "H&idden",
}
SPIN_MAX = {"image": 4096, "heads": 256, "depth": 64, "classes": 1_000_000}


def widget_name(family: str, field: str) -> str:
    """objectName of a parameter's input: 'cnnChannelsEdit', 'transformerSeqSpin', …"""
    camel = "".join(part.title() for part in field.split("_"))
    return f"{family}{camel}"


class FamilyControls(QObject):
    """modelCombo and `pages` (one page of parameters per family), for the panel to place.

    Emits `changed` on any edit.
    """

    changed = Signal()
    #: The config fields these inputs show: `model`, every family's parameters, your model's.
    FIELDS = frozenset(
        {"model", *(p.name for fam in FAMILIES.values() for p in fam.params), *USER_PAGE_FIELDS}
    )

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("familyControls")
        self.modelCombo = QComboBox()
        self.modelCombo.setObjectName("modelCombo")
        for name, fam in FAMILIES.items():
            self.modelCombo.addItem(f"{fam.title} ({name})", name)
        self.modelCombo.addItem("Your model…", USER_ITEM)
        self.modelCombo.setToolTip(MODEL_TIP)
        self.modelCombo.currentIndexChanged.connect(self._on_model_changed)
        self.pages = QStackedWidget()
        self.pages.setObjectName("familyPages")
        self._inputs: dict[str, dict[str, QWidget]] = {}
        self._labels: dict[str, dict[str, QLabel]] = {}
        for name, fam in FAMILIES.items():
            page = QWidget()
            form = QFormLayout(page)
            form.setContentsMargins(0, 0, 0, 0)
            form.setVerticalSpacing(5)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            self._inputs[name] = {}
            self._labels[name] = {}
            for param in fam.params:
                widget = self._input(name, param)
                self._inputs[name][param.name] = widget
                if param.kind == "bool":
                    form.addRow(widget)
                    continue
                label = QLabel(LABELS.get(param.name, param.name))
                label.setBuddy(widget)
                label.setToolTip(param.help)
                form.addRow(label, widget)
                self._labels[name][param.name] = label
            self.pages.addWidget(page)
        self.userPage = UserModelPage()
        self.userPage.changed.connect(self._emit_changed)
        self.pages.addWidget(self.userPage)
        self._on_model_changed(0)

    def _input(self, family: str, param: FamilyParam) -> QWidget:
        tip = param.help[:1].upper() + param.help[1:] + "."
        widget: QWidget
        if param.kind == "ints":
            edit = QLineEdit()
            edit.setObjectName(widget_name(family, param.name) + "Edit")
            edit.setPlaceholderText("e.g. 3,32,64")
            edit.textChanged.connect(self._emit_changed)
            widget = edit
        elif param.kind == "choice":
            widget = QComboBox()
            widget.setObjectName(widget_name(family, param.name) + "Combo")
            widget.addItems(list(param.choices))
            widget.currentIndexChanged.connect(self._emit_changed)
        elif param.kind == "bool":
            widget = QCheckBox("Allow the fused fast path (eval + no_grad)")
            widget.setObjectName(widget_name(family, param.name) + "Check")
            widget.toggled.connect(self._emit_changed)
        else:
            widget = QSpinBox()
            widget.setObjectName(widget_name(family, param.name) + "Spin")
            widget.setRange(param.minimum, SPIN_MAX.get(param.name, 1 << 20))
            widget.setAccelerated(True)
            widget.valueChanged.connect(self._emit_changed)
        widget.setToolTip(tip)
        return widget

    # ---- slots ----------------------------------------------------------------------------
    @Slot()
    def _emit_changed(self) -> None:
        self.changed.emit()

    @Slot(int)
    def _on_model_changed(self, index: int) -> None:
        self._show_page()
        self.changed.emit()

    def _show_page(self) -> None:
        """Show the current family's page; only it takes space (a stack is as tall as its
        tallest page otherwise, leaving a gap under a short one)."""
        self.pages.setCurrentIndex(max(self.modelCombo.currentIndex(), 0))
        for i in range(self.pages.count()):
            current = i == self.pages.currentIndex()
            policy = QSizePolicy.Policy.Preferred if current else QSizePolicy.Policy.Ignored
            page = self.pages.widget(i)
            if page is not None:
                page.setSizePolicy(policy, policy)
        user = self.modelCombo.currentData() == USER_ITEM
        self.pages.setVisible(user or bool(FAMILIES[self.model()].params))
        self.pages.adjustSize()

    # ---- config ---------------------------------------------------------------------------
    def model(self) -> str:
        """The family chosen ('user' for Your model…)."""
        return self.modelCombo.currentData() or "mlp"

    def input(self, field: str, family: str | None = None) -> QWidget:
        """The input for `field` on the page of `family` (default: the current one)."""
        return self._inputs[family or self.model()][field]

    def fields(self) -> dict[str, Any]:
        """`model` and the current family's parameters, as config fields (may raise
        ConfigError from parsing channels)."""
        model = self.model()
        if model == USER_ITEM:
            return self.userPage.fields()
        values: dict[str, Any] = {"model": model}
        for field, widget in self._inputs[model].items():
            if isinstance(widget, QLineEdit):
                values[field] = parse_widths(widget.text(), field)
            elif isinstance(widget, QComboBox):
                values[field] = widget.currentText()
            elif isinstance(widget, QCheckBox):
                values[field] = widget.isChecked()
            elif isinstance(widget, QSpinBox):
                values[field] = widget.value()
        return values

    def set_config(self, config: ExperimentConfig) -> None:
        """Show `config`'s family and the parameters of every family (no signals)."""
        widgets = [self.modelCombo, *(w for page in self._inputs.values() for w in page.values())]
        blocked = [w.blockSignals(True) for w in widgets]
        try:
            key = USER_ITEM if config.is_user_model else config.model
            self.modelCombo.setCurrentIndex(self.modelCombo.findData(key))
            self.userPage.set_config(config)
            for page in self._inputs.values():
                for field, widget in page.items():
                    value = getattr(config, field)
                    if isinstance(widget, QLineEdit):
                        widget.setText(",".join(map(str, value)))
                    elif isinstance(widget, QComboBox):
                        widget.setCurrentText(value)
                    elif isinstance(widget, QCheckBox):
                        widget.setChecked(bool(value))
                    elif isinstance(widget, QSpinBox):
                        widget.setValue(min(int(value), widget.maximum()))
        finally:
            for widget, was in zip(widgets, blocked, strict=True):
                widget.blockSignals(was)
        self._show_page()

    def binding(self, widths: QLineEdit, activation: QComboBox, head: QComboBox) -> Binding:
        """The model's inputs, these and the panel's shared ones, as one binding: the shared
        inputs take part only where the family uses them (as its defaults elsewhere), and keep
        their values for when a family that does comes back."""
        default = ExperimentConfig()

        def read() -> dict[str, Any]:
            values = self.fields()
            uses = FAMILIES.get(values["model"], USER).uses
            values["widths"] = parse_widths(widths.text()) if "widths" in uses else default.widths
            shown = {"activation": activation.currentText(), "head": head.currentText()}
            for name, value in shown.items():
                values[name] = value if name in uses else getattr(default, name)
            return values

        def write(config: ExperimentConfig) -> None:
            self.set_config(config)
            widths.setText(",".join(str(w) for w in config.widths))
            activation.setCurrentText(config.activation)
            head.setCurrentText(config.head)

        fields = frozenset({"widths", "activation", "head", *self.FIELDS})
        return Binding("model", fields, read, write, (widths, activation, head))

    def field_widgets(self) -> dict[str, list[QWidget]]:
        """Inputs per field on the current page (for inline error highlighting)."""
        if self.model() == USER_ITEM:
            return {"model": [self.userPage.modelSpecEdit]}
        return {field: [w] for field, w in self._inputs[self.model()].items()}
