"""The control panel: an input for most ExperimentConfig fields, Run/Cancel, progress.

The config itself lives in the window's ExperimentState; the inputs are bound to it both ways
(bindings.py), so an edit sets the fields edited and a config set from elsewhere shows here.
Each field's input, label, tooltip, range and choices come from its spec (field_inputs.py);
this panel places the rows (BOXES) and builds the few that hold more than one input. Validation
is core's (ExperimentConfig raises ConfigError naming the field); this panel only shows the
message beside the field it names.
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import TRAINING_FIELDS, ExperimentConfig
from autocast_explorer.core.experiment.config_parts import DEFAULT_LR, DEFAULT_ROUTES
from autocast_explorer.core.experiment.families import FAMILIES, USER
from autocast_explorer.core.experiment.route_kinds import reference_route, route_kind, route_kinds
from autocast_explorer.gui.features.experiment.bindings import Binding, ConfigBindings
from autocast_explorer.gui.features.experiment.data_controls import DataControls
from autocast_explorer.gui.features.experiment.family_controls import FamilyControls
from autocast_explorer.gui.features.experiment.field_errors import FieldErrors
from autocast_explorer.gui.features.experiment.field_inputs import (
    edited_signal,
    field_binding,
    has_control,
    make_input,
    make_label,
    spec_of,
)
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.experiment_state import FIELDS, ExperimentState
from autocast_explorer.gui.shell.forecast_bar import ForecastBar

PROGRESS_STEPS = 1000
#: Rows that are not a field's: the guards' message row and the Advanced toggle (the rows
#: after it are the less common settings, shown when it is open).
GUARD = "guard"
ADVANCED = "advanced"
#: The panel's boxes, top to bottom, and their rows in order. A field's row is its input made
#: from its spec; model, widths, data and checkpoint are rows the panel builds around their
#: inputs (the family pages, the layer editor's button, the data note, a file button).
BOXES: dict[str, tuple[str, ...]] = {
    "Mode": ("mode", "steps", "optimizer", "lr", "scaler"),
    "Model and input": ("model", "widths", "batch", GUARD, "seed", "activation", "head"),
    "Data": ("data", "epochs", "checkpoint"),
    "Autocast and comparison": ("dtype", "atol", "rtol"),
    "Measurement": (
        "threads",
        "min_time",
        "allow_slow",
        ADVANCED,
        "topk",
        "input_scale",
        "input_distribution",
        "memory_budget_mb",
        "max_time",
    ),
}
#: Where a field whose spec has a control goes when no box lists it: the end of its part's box;
#: any other part's, under Advanced.
PART_BOXES = {"training": "Mode", "model": "Model and input", "data": "Data"}
OTHER_BOX = "Measurement"

READING_GUIDE = (
    "<b>How to read the charts</b><br>"
    "<b>Latency</b>: bar = median time per forward pass (per training step in training "
    "mode), whiskers = 25th–75th percentile, "
    "▼ = the first (cold) call.<br>"
    "<b>Dtype per layer</b>: the dtype each layer's output really had, measured by wrapping "
    "each layer's forward, without and with autocast; a stripe marks a layer whose ops ran in "
    "another dtype than it returned.<br>"
    "<b>Agreement</b>: do both runs predict the same class per row, are the logits allclose, "
    "and how far apart are they."
)

#: Tooltips of the inputs that are not a config field's (a field's tooltip is in its spec).
TIPS = {
    "layers": "Edit the widths as a list, one layer per row.",
    "run": "Measure this config: plain float32 vs autocast, on a worker thread (F5).",
    "cancel": "Stop the run at the next timing block (Esc).",
    "progress": "Progress of the current run.",
}
W = TypeVar("W", bound=QWidget)


def box_rows() -> dict[str, tuple[str, ...]]:
    """BOXES, plus each field with a control that none lists (nor the family and your model's
    pages), at the end of its part's box."""
    shown = {row for rows in BOXES.values() for row in rows} | FamilyControls.FIELDS
    rows = {title: list(names) for title, names in BOXES.items()}
    for name in FIELDS:
        if name not in shown and has_control(name):
            rows[PART_BOXES.get(spec_of(name).part, OTHER_BOX)].append(name)
    return {title: tuple(names) for title, names in rows.items()}


class ControlsPanel(QWidget):
    """All inputs, the Run/Cancel buttons and the progress bar, bound to an ExperimentState.

    Emits `changed` on any edit and any change of the state. Each field's input is in
    `inputs` by field and an attribute by its objectName (`batchSpin`, `dtypeCombo`).
    """

    changed = Signal()
    layersRequested = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, state: ExperimentState | None = None
    ) -> None:
        """`state`: the experiment state to show and edit (the window's; else a new one)."""
        super().__init__(parent)
        self.setObjectName("controlsPanel")
        self.state = state if state is not None else ExperimentState(parent=self)
        self._errors = FieldErrors()
        self.inputs: dict[str, QWidget] = {}
        self._field_widgets: dict[str, list[QWidget]] = {}
        self._advanced_widgets: list[QWidget] = []
        self._advanced_fields: set[str] = set()
        self._forms: dict[str, QFormLayout] = {}
        self.bindings = ConfigBindings(self.state, self._show_rows, self)
        self.family = FamilyControls(self)
        self.dataControls = DataControls(self)
        self._build()
        self._bind()
        self.bindings.changed.connect(self.changed)
        self.bindings.show_all()

    # ---- construction ---------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(8)
        for title, rows in box_rows().items():
            box = QGroupBox(title)
            form = self._forms[title] = self._form(box)
            advanced = False
            for row in rows:
                advanced = advanced or row == ADVANCED
                self._build_row(form, row, advanced)
            layout.addWidget(box)
        self._mode_form = self._forms["Mode"]
        self._model_form = self._forms["Model and input"]
        self._data_form = self._forms["Data"]
        self._toggle_advanced(False)
        self._build_footer()
        layout.addStretch(1)
        guide = QLabel(READING_GUIDE)
        guide.setObjectName("readingGuide")
        guide.setWordWrap(True)
        guide.setStyleSheet(f"color: {style.MUTED};")
        guide.setToolTip("What the charts on the right show.")
        layout.addWidget(guide)
        self.modeCombo = self._typed("mode", QComboBox)
        self.modeCombo.currentIndexChanged.connect(self._on_mode_changed)
        self._typed("optimizer", QComboBox).currentTextChanged.connect(self._on_optimizer_changed)

    def _build_row(self, form: QFormLayout, row: str, advanced: bool) -> None:
        """One row: a message row, the Advanced toggle, a row built here, or a field's input."""
        special = {
            GUARD: lambda: self._errors.add_row(form, GUARD),
            ADVANCED: lambda: self._build_advanced(form),
            "model": lambda: self._build_model(form),
            "widths": lambda: self._build_widths(form),
            "data": lambda: self._build_data(form),
            "checkpoint": lambda: self._build_checkpoint(form),
        }
        if row in special:
            special[row]()
            return
        widget = make_input(row)
        edited_signal(widget).connect(self._emit_changed)
        self.inputs[row] = widget
        setattr(self, widget.objectName(), widget)  # controls.batchSpin, as always
        self._add_row(form, row, widget, advanced)

    def _build_model(self, form: QFormLayout) -> None:
        """The model selector, the chosen family's page of parameters and their message."""
        self.modelCombo = self.family.modelCombo
        self._add_row(form, "model", self.modelCombo)
        form.addRow(self.family.pages)
        self._errors.add_row(form, "family")
        self.family.changed.connect(self._on_family_changed)

    def _build_widths(self, form: QFormLayout) -> None:
        """The MLP's widths as text beside the layer editor's button."""
        self.widthsEdit = self._typed("widths", QLineEdit, make_input("widths"))
        self.widthsEdit.setClearButtonEnabled(True)
        self.widthsEdit.textChanged.connect(self._emit_changed)
        self.inputs["widths"] = self.widthsEdit
        self.layersButton = QToolButton()
        self.layersButton.setObjectName("layersButton")
        self.layersButton.setText("Layers…")
        self.layersButton.clicked.connect(self.layersRequested)
        widths_row = QWidget()
        row = QHBoxLayout(widths_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.widthsEdit, 1)
        row.addWidget(self.layersButton)
        self._add_row(form, "widths", widths_row, targets=[self.widthsEdit])
        self._widths_row = widths_row
        self.layersButton.setToolTip(TIPS["layers"])

    def _build_advanced(self, form: QFormLayout) -> None:
        self.advancedButton = QToolButton()
        self.advancedButton.setObjectName("advancedButton")
        self.advancedButton.setText("Advanced")
        self.advancedButton.setCheckable(True)
        self.advancedButton.setArrowType(Qt.ArrowType.RightArrow)
        self.advancedButton.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advancedButton.setToolTip("Show the less common settings.")
        self.advancedButton.toggled.connect(self._toggle_advanced)
        form.addRow(self.advancedButton)

    def _build_footer(self) -> None:
        # Run, Cancel and the progress sit in a footer the window pins below the scrolling
        # inputs, so they stay in view however long the panel grows.
        self.runFooter = QWidget()
        self.runFooter.setObjectName("runFooter")
        footer = QVBoxLayout(self.runFooter)
        footer.setContentsMargins(8, 6, 8, 6)
        self.routeSelector = QWidget()
        self.routeSelector.setObjectName("routeSelector")
        self.routeSelector.setToolTip("Which ways to a lower precision the next run measures.")
        routes_row = QHBoxLayout(self.routeSelector)
        routes_row.setContentsMargins(0, 0, 0, 0)
        routes_label = QLabel("Routes:")
        routes_label.setToolTip(self.routeSelector.toolTip())
        routes_row.addWidget(routes_label)
        self.routeChecks: dict[str, QCheckBox] = {}
        for kind in route_kinds():  # the registry's routes, its tips (route_kinds.py)
            check = QCheckBox(kind.name)
            check.setObjectName(f"route{kind.name.capitalize()}Check")
            check.setToolTip(kind.tip)
            check.toggled.connect(self._emit_changed)
            routes_row.addWidget(check)
            self.routeChecks[kind.name] = check
        self.routeChecks[reference_route()].setChecked(True)  # always measured
        self.routeChecks[reference_route()].setEnabled(False)
        routes_row.addStretch(1)
        footer.addWidget(self.routeSelector)
        buttons = QHBoxLayout()
        self.runButton = QPushButton("Run  (F5)")
        self.runButton.setObjectName("runButton")
        self.runButton.setShortcut(QKeySequence(Qt.Key.Key_F5))
        self.runButton.setToolTip(TIPS["run"])
        self.runButton.setDefault(True)
        self.runButton.setMinimumHeight(34)
        self.cancelButton = QPushButton("Cancel  (Esc)")
        self.cancelButton.setObjectName("cancelButton")
        self.cancelButton.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.cancelButton.setToolTip(TIPS["cancel"])
        self.cancelButton.setMinimumHeight(34)
        buttons.addWidget(self.runButton, 1)
        buttons.addWidget(self.cancelButton, 1)
        footer.addLayout(buttons)

        self.progressBar = QProgressBar()
        self.progressBar.setObjectName("progressBar")
        self.progressBar.setRange(0, PROGRESS_STEPS)
        self.progressBar.setValue(0)
        self.progressBar.setToolTip(TIPS["progress"])
        self.progressLabel = QLabel("")
        self.progressLabel.setObjectName("progressLabel")
        self.progressLabel.setWordWrap(True)
        self.progressLabel.setToolTip("What the run is doing now.")
        self.progressLabel.setStyleSheet(f"color: {style.MUTED};")
        self.forecastBar = ForecastBar()  # a long run's question, under Run
        footer.addWidget(self.forecastBar)
        footer.addWidget(self.progressBar)
        footer.addWidget(self.progressLabel)

    def _build_data(self, form: QFormLayout) -> None:
        """Data: synthetic, the bundled digits or a file, and the note on what it sets."""
        self.dataCombo = self.dataControls.dataCombo
        self.dataCombo.currentIndexChanged.connect(self._on_data_changed)
        self._add_row(form, "data", self.dataCombo)
        self.dataNote = self.dataControls.dataNote
        self.dataNote.setToolTip(spec_of("data").tooltip())
        form.addRow(self.dataNote)

    def _build_checkpoint(self, form: QFormLayout) -> None:
        """Optional trained weights: a path beside a file button."""
        self.checkpointEdit = self.dataControls.checkpointEdit
        self.checkpointEdit.textChanged.connect(self._emit_changed)
        self.checkpointButton = self.dataControls.checkpointButton
        self._checkpoint_row = self.dataControls.checkpointRow
        row, edit = self._checkpoint_row, self.checkpointEdit
        self._add_row(form, "checkpoint", row, targets=[edit])

    def _typed(self, name: str, kind: type[W], widget: QWidget | None = None) -> W:
        """The input of field `name` (or `widget`) as the kind of input it is."""
        found = widget if widget is not None else self.inputs[name]
        if not isinstance(found, kind):
            raise TypeError(f"{name}: {type(found).__name__} is no {kind.__name__}")
        return found

    def data(self) -> str:
        """config.data as the selector shows it: synthetic, digits or a file's path."""
        return self.dataControls.data()

    @Slot(int)
    def _on_data_changed(self, _index: int) -> None:
        self._show_data_fields()
        self.bindings.edited("data")

    def _show_data_fields(self) -> None:
        real = self.data() != "synthetic"
        self._data_form.setRowVisible(self.dataNote, real)
        self._data_form.setRowVisible(self.inputs["epochs"], real)
        self._data_form.setRowVisible(self._checkpoint_row, real)

    def _form(self, box: QGroupBox) -> QFormLayout:
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setContentsMargins(8, 6, 8, 6)
        form.setVerticalSpacing(5)
        return form

    def _add_row(
        self,
        form: QFormLayout,
        field: str,
        widget: QWidget,
        advanced: bool = False,
        targets: list[QWidget] | None = None,
    ) -> None:
        """The row of `field`: its label and tooltip from its spec, then its message row."""
        inputs = targets or [widget]
        tip = spec_of(field).tooltip()
        for target in {widget, *inputs}:
            target.setToolTip(tip)
        label = make_label(field, inputs[0])
        if label is not None:
            form.addRow(label, widget)
        else:
            form.addRow(widget)
        if advanced:
            self._advanced_widgets += [w for w in (label, widget) if w is not None]
            self._advanced_fields.add(field)
        self._field_widgets[field] = inputs
        self._errors.add_row(form, field)

    # ---- slots ----------------------------------------------------------------------------
    @Slot()
    def _emit_changed(self) -> None:
        """An input was edited: its binding sets the fields it stands for on the state."""
        name = self.bindings.binding_of(self.sender())
        if name is not None:
            self.bindings.edited(name)

    @Slot()
    def _on_family_changed(self) -> None:
        self._show_family_fields()
        self.bindings.edited("model")

    def _show_family_fields(self) -> None:
        """Show the shared inputs the chosen family uses (widths: MLP; activation: not RNN)."""
        uses = FAMILIES.get(self.family.model(), USER).uses
        self._model_form.setRowVisible(self._widths_row, "widths" in uses)
        self._model_form.setRowVisible(self.inputs["activation"], "activation" in uses)
        self._model_form.setRowVisible(self.inputs["head"], "head" in uses)

    @Slot(int)
    def _on_mode_changed(self, _index: int) -> None:
        self._show_training_fields()
        self.bindings.edited("mode")

    def _show_rows(self) -> None:
        """Show the rows the config shown uses (after the state was written to the inputs)."""
        self._show_training_fields()
        self._show_data_fields()
        self._show_family_fields()

    @Slot(str)
    def _on_optimizer_changed(self, name: str) -> None:
        """Each optimizer's usual step size (AdamW normalises its updates, SGD does not)."""
        if name in DEFAULT_LR:
            self._typed("lr", QDoubleSpinBox).setValue(DEFAULT_LR[name])

    def mode(self) -> str:
        """'infer' or 'train', as the mode selector shows."""
        return str(self.modeCombo.currentData())

    def _show_training_fields(self) -> None:
        training = self.mode() == "train"
        for name, check in self.routeChecks.items():
            kind = route_kind(name)
            trains = kind is not None and kind.trains
            # The reference is always measured; in Training mode only a route that trains.
            check.setEnabled(name != reference_route() and (trains or not training))
        for field in (f for f in TRAINING_FIELDS if f != "mode"):  # the selector stays on
            for widget in self._field_widgets[field]:
                widget.setEnabled(training)
                # Shown only in Training mode, so Inference keeps the panel short.
                if self._mode_form.indexOf(widget) >= 0:
                    self._mode_form.setRowVisible(widget, training)
        self.inputs["min_time"].setToolTip(
            spec_of("min_time").tooltip()
            + (" In Training mode: seconds of timed training steps per mode." if training else "")
        )

    @Slot(bool)
    def _toggle_advanced(self, shown: bool) -> None:
        self.advancedButton.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        for widget in self._advanced_widgets:
            widget.setVisible(shown)

    # ---- config ---------------------------------------------------------------------------
    def _bind(self) -> None:
        """Inputs that stand for several fields together, then one input per field."""
        mode = Binding(
            "mode",
            frozenset({"mode", "routes"}),
            lambda: {"mode": self.mode(), "routes": self.routes()},
            self._write_mode,
            (self.modeCombo, *self.routeChecks.values()),
        )
        data = self.dataControls.binding()
        activation, head = self._typed("activation", QComboBox), self._typed("head", QComboBox)
        model = self.family.binding(self.widthsEdit, activation, head)
        for binding in (mode, model, data):
            self.bindings.add(binding)
        unbound = self.bindings.unbound_fields(FIELDS)
        for field, widget in self.inputs.items():
            if field in unbound:
                self.bindings.add(field_binding(field, widget))

    def _write_mode(self, config: ExperimentConfig) -> None:
        self.modeCombo.setCurrentIndex(max(self.modeCombo.findData(config.mode), 0))
        for name, check in self.routeChecks.items():
            check.setChecked(name in config.routes)

    def config(self) -> ExperimentConfig:
        """The state's config; ConfigError naming the first bad field while an edit is invalid."""
        return self.bindings.config()

    def routes(self) -> tuple[str, ...]:
        """The ticked routes (eager always; training measures eager alone)."""
        if self.mode() == "train":
            return DEFAULT_ROUTES
        return tuple(name for name, check in self.routeChecks.items() if check.isChecked())

    def set_config(self, config: ExperimentConfig) -> None:
        """Set the state to `config` (the inputs follow); edits pending here are dropped."""
        if not self.state.set(config):
            self.bindings.discard_pending()

    def unbound_fields(self) -> tuple[str, ...]:
        """Config fields no input here shows: the state alone keeps them."""
        return self.bindings.unbound_fields(FIELDS)

    # ---- inline errors --------------------------------------------------------------------
    def show_errors(self, errors: dict[str, str]) -> None:
        """Show each message under its field (guard fields under batch); hide the rest."""
        shown = self._errors.show(errors, self._field_widgets, self.family.field_widgets())
        if shown & self._advanced_fields:
            self.advancedButton.setChecked(True)

    def errors(self) -> dict[str, str]:
        """Messages now shown, by field ('guard' for memory/time guards)."""
        return self._errors.texts()
