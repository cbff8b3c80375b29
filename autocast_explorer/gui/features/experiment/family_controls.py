"""The model selector and each family's parameters, built from core's family descriptions.

`modelCombo` picks the family; below it a stacked page per family holds one input per
parameter core declares (core/experiment/families/), made from the parameter's config field
(field_inputs.py: its label, range and choices from the field's spec, its tooltip from the
family's meaning), so a new family needs no code here.
The MLP's own inputs (widths, layer editor) stay where they always were, in the controls panel;
the panel shows or hides the shared inputs (widths, activation) as the family uses them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QStackedWidget,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import FAMILIES, USER
from autocast_explorer.gui.features.experiment.bindings import Binding
from autocast_explorer.gui.features.experiment.field_inputs import (
    edited_signal,
    make_input,
    make_label,
    read_value,
    spec_of,
    write_value,
)
from autocast_explorer.gui.features.experiment.user_model_page import (
    USER_PAGE_FIELDS,
    UserModelPage,
)

#: modelCombo's data for "Your model…" (the config's `model` is then the typed spec).
USER_ITEM = "user"


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
        self.modelCombo.setToolTip(spec_of("model").tooltip())
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
                tip = param.help[:1].upper() + param.help[1:] + "."
                widget = make_input(param.name, prefix=name, tip=tip)
                edited_signal(widget).connect(self._emit_changed)
                self._inputs[name][param.name] = widget
                label = make_label(param.name, widget)
                if label is None:
                    form.addRow(widget)
                    continue
                label.setToolTip(param.help)
                form.addRow(label, widget)
                self._labels[name][param.name] = label
            self.pages.addWidget(page)
        self.userPage = UserModelPage()
        self.userPage.changed.connect(self._emit_changed)
        self.pages.addWidget(self.userPage)
        self._on_model_changed(0)

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
            values[field] = read_value(field, widget)
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
                    write_value(widget, getattr(config, field))
        finally:
            for widget, was in zip(widgets, blocked, strict=True):
                widget.blockSignals(was)
        self._show_page()

    def binding(self, widths: QLineEdit, activation: QComboBox, head: QComboBox) -> Binding:
        """The model's inputs, these and the panel's shared ones, as one binding: the shared
        inputs take part only where the family uses them (as its defaults elsewhere), and keep
        their values for when a family that does comes back."""
        default = ExperimentConfig()
        shared: dict[str, QWidget] = {"widths": widths, "activation": activation, "head": head}

        def read() -> dict[str, Any]:
            values = self.fields()
            uses = FAMILIES.get(values["model"], USER).uses
            for name, widget in shared.items():
                values[name] = read_value(name, widget) if name in uses else getattr(default, name)
            return values

        def write(config: ExperimentConfig) -> None:
            self.set_config(config)
            for name, widget in shared.items():
                write_value(widget, getattr(config, name))

        fields = frozenset({"widths", "activation", "head", *self.FIELDS})
        return Binding("model", fields, read, write, (widths, activation, head))

    def field_widgets(self) -> dict[str, list[QWidget]]:
        """Inputs per field on the current page (for inline error highlighting)."""
        if self.model() == USER_ITEM:
            return {"model": [self.userPage.modelSpecEdit]}
        return {field: [w] for field, w in self._inputs[self.model()].items()}
