"""The Sweeps tab's inputs and read-outs, each widget configured once here.

What to sweep (the param combo, the values typed, the buttons) and the sentences shown under
them (plan, status, crossover, verdict, warnings): their objectNames, tooltips and looks live
here, so the tab itself reads as layout and behaviour.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSizePolicy, QWidget

from autocast_explorer.core.experiment.families import families_sweeping, swept_sizes
from autocast_explorer.core.sweeps.spec import (
    BATCH,
    GRID,
    default_range,
    sweep_params,
    sweep_params_in_words,
)
from autocast_explorer.gui.shell import style

#: The param combo's entry of a batch × width grid (its data; SweepSpec's label is GRID).
GRID_CHOICE = ("grid", "batch × width grid")


def param_choices() -> tuple[tuple[str, str], ...]:
    """The param combo's entries, (data, text), from the family registry: the batch, each size
    a family sweeps with the families that sweep it, and the grid after the width it crosses."""
    choices = [(BATCH.name, BATCH.label)]
    crossed = GRID.split(",")[1]
    for size in swept_sizes():
        owners = ", ".join(fam.title for fam in families_sweeping(size.name))
        choices.append((size.name, f"{size.label} ({owners})" if owners else size.label))
        if size.name == crossed:
            choices.append(GRID_CHOICE)
    return tuple(choices)


RUN_SWEEP_TIP = (
    "Measure float32 vs autocast at every value, one point after another, on a worker "
    "thread (F6). Each point gets the measurement time set on the left."
)
ERROR_STYLE = (
    f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 3px; border-radius: 3px;"
)
INVALID_BORDER = f"border: 2px solid {style.BAD}; border-radius: 3px;"


def text_key(param: str) -> str:
    """Which remembered values text a param edits (a grid edits its batch values)."""
    return "batch" if param == "grid" else param


def default_text(param: str) -> str:
    """The log-spaced default of `param` as the range text a person can edit ('1:2048:12')."""
    low, high, count = default_range(param)
    return f"{low}:{high}:{count}"


def default_texts() -> dict[str, str]:
    """Every param's default values text, by param."""
    return {p: default_text(p) for p in sweep_params()}


class TextLabel(QLabel):
    """A label that takes no room while it has nothing to say."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.hide()

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))


# ---- what to sweep ---------------------------------------------------------------------------
def param_combo() -> QComboBox:
    """objectName `sweepParamCombo`: what to vary, data the param name."""
    combo = QComboBox()
    # As wide as ~12 characters, not its longest entry: the popup shows them whole.
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(12)
    combo.setObjectName("sweepParamCombo")
    for data, text in param_choices():
        combo.addItem(text, data)
    combo.setToolTip(
        "What to vary: the batch size (any model), a size of the model chosen on the left – "
        f"{sweep_params_in_words()} – where an MLP's width is every hidden width at once "
        "(input width and classes stay), or batch × width as a grid (MLP)."
    )
    return combo


def values_edit(text: str) -> QLineEdit:
    """objectName `sweepValuesEdit`: the swept values (the batches of a grid)."""
    edit = _line_edit(text, "sweepValuesEdit", "e.g. 1,8,64,512 or 1:2048:12")
    edit.setToolTip(
        "Values to measure: a list (1,8,64,512) or LOW:HIGH:COUNT, COUNT values spaced "
        "evenly on a log scale (1:2048:12 gives the powers of two 1 … 2048)."
    )
    return edit


def width_values_edit(text: str) -> QLineEdit:
    """objectName `sweepWidthValuesEdit`: a grid's hidden widths."""
    edit = _line_edit(text, "sweepWidthValuesEdit", "e.g. 128,512,2048 or 64:4096:7")
    edit.setToolTip(
        "Grid only: the hidden widths, one row of the grid each (list or LOW:HIGH:COUNT)."
    )
    return edit


def _line_edit(text: str, name: str, placeholder: str) -> QLineEdit:
    edit = QLineEdit(text)
    edit.setObjectName(name)
    edit.setClearButtonEnabled(True)
    edit.setPlaceholderText(placeholder)
    return edit


def error_label(name: str) -> QLabel:
    """An inline error under an input: hidden until it has a message."""
    label = QLabel("")
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet(ERROR_STYLE)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.hide()
    return label


# ---- the buttons -----------------------------------------------------------------------------
def defaults_button() -> QPushButton:
    button = QPushButton("Log-spaced defaults")
    button.setObjectName("sweepDefaultsButton")
    button.setToolTip(
        "Reset the values to the defaults: batch 1:2048:12 (powers of two), width 64:4096:7."
    )
    return button


def run_button() -> QPushButton:
    """objectName `runSweepButton`, bold: the tab's main action."""
    button = QPushButton("Run sweep  (F6)")
    button.setObjectName("runSweepButton")
    button.setToolTip(RUN_SWEEP_TIP)
    button.setDefault(False)
    font = button.font()
    font.setBold(True)
    button.setFont(font)
    return button


def cancel_button() -> QPushButton:
    button = QPushButton("Cancel  (Esc)")
    button.setObjectName("cancelSweepButton")
    button.setToolTip("Stop the sweep at the next timing block (Esc); measured points stay drawn.")
    return button


# ---- the read-outs under the inputs ----------------------------------------------------------
def plan_label() -> TextLabel:
    label = TextLabel()
    label.setObjectName("sweepPlanLabel")
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {style.MUTED};")
    label.setToolTip("What the sweep will measure; the rest comes from the left.")
    return label


def status_label() -> TextLabel:
    label = TextLabel()
    label.setObjectName("sweepStatusLabel")
    label.setToolTip("Progress of the sweep, with the time left (from core).")
    return label


def crossover_label() -> TextLabel:
    """objectName `sweepCrossoverLabel`: large and bold, the sweep's headline."""
    label = TextLabel()
    label.setObjectName("sweepCrossoverLabel")
    label.setWordWrap(True)
    font = label.font()
    font.setPointSize(12)
    font.setBold(True)
    label.setFont(font)
    label.setToolTip(
        "Where plain ÷ autocast crosses 1.0, interpolated on a log scale (core.crossover)."
    )
    return label


def verdict_label() -> TextLabel:
    label = TextLabel()
    label.setObjectName("sweepVerdictLabel")
    label.setWordWrap(True)
    label.setToolTip("The hardware verdict: CPU flags and these measurements.")
    return label


def warnings_label() -> QLabel:
    """objectName `sweepWarningsLabel`: hidden until a sweep has warnings."""
    label = QLabel("")
    label.setObjectName("sweepWarningsLabel")
    label.setStyleSheet(f"color: {style.WARN};")
    # Its lines are elided to the tab's width (full text in the tooltip): it must not be
    # what sets that width, or a long warning widens the tab past its viewport.
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.hide()
    return label
