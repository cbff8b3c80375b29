"""The control panel: an input for most ExperimentConfig fields, Run/Cancel, progress.

The config itself lives in the window's ExperimentState; the inputs are bound to it both ways
(bindings.py), so an edit sets the fields edited and a config set from elsewhere shows here.
Validation is core's (ExperimentConfig raises ConfigError naming the field); this panel only
shows the message beside the field it names. Spin boxes keep most values in range by
construction; the text fields (widths) are where people type something invalid.
"""

from __future__ import annotations

import os

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
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import TRAINING_FIELDS, ExperimentConfig
from autocast_explorer.core.experiment.config_parts import (
    ACTIVATIONS,
    DEFAULT_LR,
    DEFAULT_ROUTES,
    HEADS,
    INPUT_DISTRIBUTIONS,
    MAX_EPOCHS,
    MAX_LR,
    MAX_STEPS,
    MAX_TIME_FACTOR,
    OPTIMIZERS,
)
from autocast_explorer.core.experiment.families import FAMILIES, USER
from autocast_explorer.core.experiment.route_kinds import reference_route, route_kinds
from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.gui.features.experiment.bindings import (
    Binding,
    ConfigBindings,
    input_binding,
)
from autocast_explorer.gui.features.experiment.data_controls import DataControls
from autocast_explorer.gui.features.experiment.family_controls import MODEL_TIP, FamilyControls
from autocast_explorer.gui.features.experiment.field_errors import FieldErrors
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.experiment_state import FIELDS, ExperimentState

ADVANCED_FIELDS = frozenset({"topk", "input_scale", "input_distribution", "memory_budget_mb"})
PROGRESS_STEPS = 1000
#: The mode selector's items: (shown text, config.mode).
MODE_ITEMS = (("Inference", "infer"), ("Training", "train"))

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

TIPS = {
    "widths": "Layer widths of the MLP: input width, hidden widths…, number of classes. "
    "256,256,256,10 is the tutorial's model: Linear 256→256, ReLU, 256→256, ReLU, 256→10.",
    "layers": "Edit the widths as a list, one layer per row.",
    "batch": "Rows per forward pass (the batch size of the random input x).",
    "seed": "torch.manual_seed before building the model and input: same seed, same numbers.",
    "activation": "Activation between the layers (MLP, CNN) or inside each encoder layer's "
    "feed-forward (transformer; only relu and gelu allow the fused fast path).",
    "model": MODEL_TIP,
    "head": "Optional output layer: softmax / log_softmax show how autocast treats them on CPU.",
    "dtype": "The low-precision dtype for torch.autocast('cpu', dtype=…).",
    "atol": "Absolute tolerance for torch.allclose(plain, autocast) on the logits.",
    "rtol": "Relative tolerance for torch.allclose(plain, autocast) on the logits.",
    "threads": "torch.set_num_threads for the run; auto keeps torch's default for this machine.",
    "min_time": "Measurement budget: seconds of timed forward passes per mode. "
    "Longer gives steadier medians.",
    "max_time": "How long a run may go on past the time per mode while the speedup's 95% "
    "interval is wider than ±5% (a busy machine): seconds per mode; auto is "
    f"{MAX_TIME_FACTOR:g} × the time per mode. Sweeps ignore it (a point's budget is its time).",
    "allow_slow": "Run even if one forward pass is estimated to take longer than 10 s "
    "(Cancel only takes effect between forward passes).",
    "topk": "k for top-k agreement (Agreement tab): is the float32 class among autocast's k "
    "highest logits, and how much do the two top-k sets overlap?",
    "input_scale": "Multiply the random input x by this. bfloat16 has float32's range; float16 "
    "overflows above 65504 and loses precision below 6.1e-5; with tiny inputs the biases "
    "dominate. Run again and compare SQNR (Layer error tab) and agreement.",
    "input_distribution": "Draw x from a normal (torch.randn) or uniform [-1, 1) distribution. "
    "Different inputs give different per-layer error and margins: Run again and compare the "
    "Layer error and Agreement tabs.",
    "memory_budget_mb": "Refuse models whose estimated peak memory exceeds this many MB "
    "(auto: half the memory available now).",
    "mode": "Inference times forward passes. Training trains two copies of the model side by "
    "side, from the same weights on the same batches: one in float32, one under autocast, and "
    "measures step time, loss, gradient dtypes and the memory saved for backward.",
    "steps": "Training steps for each copy (the loss chart draws them as they complete).",
    "lr": "Learning rate of the optimizer (changing the optimizer sets its usual value).",
    "optimizer": "sgd: SGD with momentum 0.9; adamw: AdamW.",
    "scaler": "float16 only: scale the loss with torch.amp.GradScaler('cpu') so small gradients "
    "do not underflow. Untick to see what happens without it.",
    "data": "What the model sees. Synthetic: random inputs and an untrained model (timing and "
    "dtypes). Handwritten digits: the bundled UCI digits (8×8 images); the model is trained in "
    "float32 first, then its held-out answers are compared in float32 and under autocast. "
    "File…: your own .npz, .safetensors or .pt with arrays x (rows) and y (labels).",
    "epochs": "Epochs of float32 training on the data's training rows (seeded), before the "
    "held-out rows are evaluated both ways.",
    "checkpoint": "Optional: your trained weights (a state_dict as .safetensors or a "
    "weights-only .pt) to evaluate instead of training. Its keys and shapes must match the model.",
    "run": "Measure this config: plain float32 vs autocast, on a worker thread (F5).",
    "cancel": "Stop the run at the next timing block (Esc).",
    "progress": "Progress of the current run.",
}


class ControlsPanel(QWidget):
    """All inputs, the Run/Cancel buttons and the progress bar, bound to an ExperimentState.

    Emits `changed` on any edit and any change of the state.
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
        self._field_widgets: dict[str, list[QWidget]] = {}
        self._advanced_widgets: list[QWidget] = []
        self.bindings = ConfigBindings(self.state, self._show_rows, self)
        self._build()
        self._bind()
        self.bindings.changed.connect(self.changed)
        self.bindings.show_all()

    # ---- construction ---------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(8)
        for box in (
            self._build_mode(),
            self._build_model(),
            self._build_data(),
            self._build_autocast(),
            self._build_measure(),
        ):
            layout.addWidget(box)
        self._toggle_advanced(False)
        self._build_footer()
        layout.addStretch(1)
        guide = QLabel(READING_GUIDE)
        guide.setObjectName("readingGuide")
        guide.setWordWrap(True)
        guide.setStyleSheet(f"color: {style.MUTED};")
        guide.setToolTip("What the charts on the right show.")
        layout.addWidget(guide)

        self.widthsEdit.textChanged.connect(self._emit_changed)

    def _build_mode(self) -> QGroupBox:
        """Mode: inference or training, and training's steps, optimizer and scaler."""
        mode = QGroupBox("Mode")
        mode_form = self._form(mode)
        self._mode_form = mode_form
        self.modeCombo = QComboBox()
        self.modeCombo.setObjectName("modeCombo")
        for text, value in MODE_ITEMS:
            self.modeCombo.addItem(text, value)
        self.modeCombo.currentIndexChanged.connect(self._on_mode_changed)
        self._add_row(mode_form, "mode", "M&ode", self.modeCombo)
        self.stepsSpin = self._spin("stepsSpin", 1, MAX_STEPS)
        self._add_row(mode_form, "steps", "Ste&ps", self.stepsSpin)
        self.optimizerCombo = self._combo("optimizerCombo", OPTIMIZERS)
        self.optimizerCombo.currentTextChanged.connect(self._on_optimizer_changed)
        self._add_row(mode_form, "optimizer", "O&ptimizer", self.optimizerCombo)
        self.lrSpin = self._double("lrSpin", 1e-5, MAX_LR, 5, 0.01)
        self._add_row(mode_form, "lr", "&Learning rate", self.lrSpin)
        self.scalerCheck = QCheckBox("GradScaler for float16")
        self.scalerCheck.setObjectName("scalerCheck")
        self.scalerCheck.toggled.connect(self._emit_changed)
        self._add_row(mode_form, "scaler", "", self.scalerCheck)
        return mode

    def _build_model(self) -> QGroupBox:
        """Model and input: the family and its parameters, widths, batch, seed, activation."""
        model = QGroupBox("Model and input")
        model_form = self._form(model)
        self.family = FamilyControls(self)
        self.modelCombo = self.family.modelCombo
        self._add_row(model_form, "model", "Mo&del", self.modelCombo)
        model_form.addRow(self.family.pages)
        self._add_error_row(model_form, "family")
        self.family.changed.connect(self._on_family_changed)
        self._model_form = model_form
        self.widthsEdit = QLineEdit()
        self.widthsEdit.setObjectName("widthsEdit")
        self.widthsEdit.setPlaceholderText("e.g. 256,256,256,10")
        self.widthsEdit.setClearButtonEnabled(True)
        self.layersButton = QToolButton()
        self.layersButton.setObjectName("layersButton")
        self.layersButton.setText("Layers…")
        self.layersButton.clicked.connect(self.layersRequested)
        widths_row = QWidget()
        row = QHBoxLayout(widths_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.widthsEdit, 1)
        row.addWidget(self.layersButton)
        self._add_row(model_form, "widths", "&Widths", widths_row, targets=[self.widthsEdit])
        self._widths_row = widths_row
        self.layersButton.setToolTip(TIPS["layers"])

        self.batchSpin = self._spin("batchSpin", 1, 1_000_000)
        self._add_row(model_form, "batch", "&Batch", self.batchSpin)
        self._add_error_row(model_form, "guard")
        self.seedSpin = self._spin("seedSpin", 0, 2**31 - 1)
        self._add_row(model_form, "seed", "&Seed", self.seedSpin)
        self.activationCombo = self._combo("activationCombo", ACTIVATIONS)
        self._add_row(model_form, "activation", "Ac&tivation", self.activationCombo)
        self.headCombo = self._combo("headCombo", HEADS)
        self._add_row(model_form, "head", "&Head", self.headCombo)
        return model

    def _build_autocast(self) -> QGroupBox:
        auto = QGroupBox("Autocast and comparison")
        auto_form = self._form(auto)
        self.dtypeCombo = self._combo("dtypeCombo", DTYPES)
        self._add_row(auto_form, "dtype", "&Dtype", self.dtypeCombo)
        self.atolSpin = self._double("atolSpin", 0.0, 1e3, 4, 0.01)
        self._add_row(auto_form, "atol", "&atol", self.atolSpin)
        self.rtolSpin = self._double("rtolSpin", 0.0, 1.0, 7, 1e-5)
        self._add_row(auto_form, "rtol", "&rtol", self.rtolSpin)
        return auto

    def _build_measure(self) -> QGroupBox:
        """Measurement: threads, time, and the less common settings under Advanced."""
        measure = QGroupBox("Measurement")
        measure_form = self._form(measure)
        self.threadsSpin = self._spin("threadsSpin", 0, 1024)
        self.threadsSpin.setSpecialValueText(f"auto ({os.cpu_count() or 1} cores)")
        self._add_row(measure_form, "threads", "T&hreads", self.threadsSpin)
        self.minTimeSpin = self._double("minTimeSpin", 0.001, 600.0, 3, 0.1)
        self.minTimeSpin.setSuffix(" s")
        self._add_row(measure_form, "min_time", "&Time per mode", self.minTimeSpin)
        self.allowSlowCheck = QCheckBox("Allow slow runs (> 10 s per forward)")
        self.allowSlowCheck.setObjectName("allowSlowCheck")
        self.allowSlowCheck.toggled.connect(self._emit_changed)
        self._add_row(measure_form, "allow_slow", "", self.allowSlowCheck)

        self.advancedButton = QToolButton()
        self.advancedButton.setObjectName("advancedButton")
        self.advancedButton.setText("Advanced")
        self.advancedButton.setCheckable(True)
        self.advancedButton.setArrowType(Qt.ArrowType.RightArrow)
        self.advancedButton.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advancedButton.setToolTip("Show the less common settings.")
        self.advancedButton.toggled.connect(self._toggle_advanced)
        measure_form.addRow(self.advancedButton)
        self.topkSpin = self._spin("topkSpin", 1, 1_000_000)
        self._add_row(measure_form, "topk", "Top-&k", self.topkSpin, advanced=True)
        self.inputScaleSpin = self._double("inputScaleSpin", 1e-6, 1e6, 6, 0.5)
        self._add_row(measure_form, "input_scale", "Input &scale", self.inputScaleSpin, True)
        self.distributionCombo = self._combo("distributionCombo", INPUT_DISTRIBUTIONS)
        self._add_row(
            measure_form, "input_distribution", "Input d&istribution", self.distributionCombo, True
        )
        self.memoryBudgetSpin = self._double("memoryBudgetSpin", 0.0, 1e7, 0, 256)
        self.memoryBudgetSpin.setSuffix(" MB")
        self.memoryBudgetSpin.setSpecialValueText("auto (½ free RAM)")
        self._add_row(
            measure_form, "memory_budget_mb", "&Memory budget", self.memoryBudgetSpin, True
        )
        self.maxTimeSpin = self._double("maxTimeSpin", 0.0, 3600.0, 3, 0.5)
        self.maxTimeSpin.setSuffix(" s")
        self.maxTimeSpin.setSpecialValueText(f"auto ({MAX_TIME_FACTOR:g} × time per mode)")
        self._add_row(measure_form, "max_time", "Ma&x time per mode", self.maxTimeSpin, True)
        return measure

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
        footer.addWidget(self.progressBar)
        footer.addWidget(self.progressLabel)

    def _build_data(self) -> QGroupBox:
        """Data: synthetic, the bundled digits or a file; epochs; optional trained weights."""
        box = QGroupBox("Data")
        form = self._form(box)
        self._data_form = form
        self.dataControls = DataControls(self)
        self.dataCombo = self.dataControls.dataCombo
        self.dataCombo.currentIndexChanged.connect(self._on_data_changed)
        self._add_row(form, "data", "D&ata", self.dataCombo)
        self.dataNote = self.dataControls.dataNote
        self.dataNote.setToolTip(TIPS["data"])
        form.addRow(self.dataNote)
        self.epochsSpin = self._spin("epochsSpin", 1, MAX_EPOCHS)
        self._add_row(form, "epochs", "&Epochs", self.epochsSpin)
        self.checkpointEdit = self.dataControls.checkpointEdit
        self.checkpointEdit.textChanged.connect(self._emit_changed)
        self.checkpointButton = self.dataControls.checkpointButton
        self._checkpoint_row = self.dataControls.checkpointRow
        row, edit = self._checkpoint_row, self.checkpointEdit
        self._add_row(form, "checkpoint", "&Weights", row, targets=[edit])
        return box

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
        self._data_form.setRowVisible(self.epochsSpin, real)
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
        label: str,
        widget: QWidget,
        advanced: bool = False,
        targets: list[QWidget] | None = None,
    ) -> None:
        tip = TIPS.get(field, "")
        widget.setToolTip(tip)
        for target in targets or [widget]:
            target.setToolTip(tip)
        if label:
            text = QLabel(label)
            text.setBuddy((targets or [widget])[0])
            text.setToolTip(tip)
            form.addRow(text, widget)
            if advanced:
                self._advanced_widgets += [text, widget]
        else:
            form.addRow(widget)
            if advanced:
                self._advanced_widgets.append(widget)
        self._field_widgets[field] = targets or [widget]
        self._add_error_row(form, field)

    def _add_error_row(self, form: QFormLayout, field: str) -> None:
        self._errors.add_row(form, field)

    def _spin(self, name: str, low: int, high: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setObjectName(name)
        spin.setRange(low, high)
        spin.setAccelerated(True)
        spin.valueChanged.connect(self._emit_changed)
        return spin

    def _double(self, name: str, low: float, high: float, decimals: int, step: float):
        spin = QDoubleSpinBox()
        spin.setObjectName(name)
        spin.setDecimals(decimals)
        spin.setRange(low, high)
        spin.setSingleStep(step)
        spin.valueChanged.connect(self._emit_changed)
        return spin

    def _combo(self, name: str, items: tuple[str, ...]) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.addItems(list(items))
        combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        combo.currentIndexChanged.connect(self._emit_changed)
        return combo

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
        self._model_form.setRowVisible(self.activationCombo, "activation" in uses)
        self._model_form.setRowVisible(self.headCombo, "head" in uses)

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
            self.lrSpin.setValue(DEFAULT_LR[name])

    def mode(self) -> str:
        """'infer' or 'train', as the mode selector shows."""
        return str(self.modeCombo.currentData())

    def _show_training_fields(self) -> None:
        training = self.mode() == "train"
        for name, check in self.routeChecks.items():
            check.setEnabled(name != "eager" and not training)
        for field in (f for f in TRAINING_FIELDS if f != "mode"):  # the selector stays on
            for widget in self._field_widgets[field]:
                widget.setEnabled(training)
                # Shown only in Training mode, so Inference keeps the panel short.
                if self._mode_form.indexOf(widget) >= 0:
                    self._mode_form.setRowVisible(widget, training)
        self.minTimeSpin.setToolTip(
            TIPS["min_time"]
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
        model = self.family.binding(self.widthsEdit, self.activationCombo, self.headCombo)
        for binding in (mode, model, data):
            self.bindings.add(binding)
        unbound = self.bindings.unbound_fields(FIELDS)
        for field, (widget, *_) in self._field_widgets.items():
            if field in unbound:  # threads, budget and max time show None as 0 ("auto")
                none_at_zero = ExperimentConfig.__dataclass_fields__[field].default is None
                self.bindings.add(input_binding(field, widget, zero_is_none=none_at_zero))

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
        if shown & ADVANCED_FIELDS:
            self.advancedButton.setChecked(True)

    def errors(self) -> dict[str, str]:
        """Messages now shown, by field ('guard' for memory/time guards)."""
        return self._errors.texts()
