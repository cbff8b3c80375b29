"""The Plan tab's inputs and read-outs, each configured once here (objectName, tooltip, look),
so the tab itself reads as layout and behaviour."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
)

from autocast_explorer.core.planning.criterion import DEFAULT_CRITERION, MEASURES
from autocast_explorer.core.planning.words import CANDIDATE_COLUMNS
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.labels import wrapping_label

#: Seconds the search may take unless the budget is changed: a few candidates on a small model.
DEFAULT_BUDGET_S = 60
PROGRESS_STEPS = 1000
#: The candidates table's columns that wrap, and the share of the width left each gets.
WRAPPING_COLUMNS = {0: 0.55, len(CANDIDATE_COLUMNS) - 1: 0.45}
INTRO = (
    "<b>So what should I run?</b> Find plan times routes, lower dtypes, threads and layers kept "
    "in float32 against plain float32 eager, and picks the fastest that keeps the criterion."
)
FIND_TIP = (
    "Search for the fastest way to run the model on the left that meets the criterion, on a "
    "worker thread, within the budget (Cancel or Esc stops it within one candidate)."
)
ERROR_STYLE = (
    f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 3px; border-radius: 3px;"
)
INVALID_BORDER = f"border: 2px solid {style.BAD}; border-radius: 3px;"


def _forms() -> str:
    """'agree>=N (percent of rows …), …' from core's list of measures."""
    return "; ".join(f"{name}{op}N: {what}" for name, (op, what, _) in MEASURES.items())


def criterion_edit() -> QLineEdit:
    """objectName `planCriterionEdit`: checked by core's parser as it is typed."""
    edit = QLineEdit(DEFAULT_CRITERION)
    edit.setObjectName("planCriterionEdit")
    edit.setClearButtonEnabled(True)
    edit.setPlaceholderText("e.g. agree>=99.5%, sqnr>=40 or accuracy-drop<=0.5")
    edit.setToolTip(f"What a plan must keep. {_forms()} (accuracy-drop needs real data).")
    return edit


def budget_spin() -> QSpinBox:
    """objectName `planBudgetSpin`: the search's time budget in seconds."""
    spin = QSpinBox()
    spin.setObjectName("planBudgetSpin")
    spin.setRange(5, 3600)
    spin.setValue(DEFAULT_BUDGET_S)
    spin.setSuffix(" s")
    spin.setToolTip(
        "How long the search may take in all; it stops starting candidates when the budget is "
        "spent and plans from those it timed."
    )
    return spin


def bold_button(text: str, name: str, tip: str) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    button.setToolTip(tip)
    font = button.font()
    font.setBold(True)
    button.setFont(font)
    return button


def button(text: str, name: str, tip: str) -> QPushButton:
    widget = QPushButton(text)
    widget.setObjectName(name)
    widget.setToolTip(tip)
    return widget


def error_label() -> QLabel:
    """objectName `planCriterionError`: hidden until the criterion cannot be used."""
    widget = wrapping_label("planCriterionError", "Why the criterion cannot be used.")
    widget.setStyleSheet(ERROR_STYLE)
    widget.hide()
    return widget


def outcome_label() -> QLabel:
    """objectName `planOutcomeLabel`: the plan's answer, large."""
    widget = wrapping_label(
        "planOutcomeLabel",
        "The outcome, from core (core.planning.words.outcome_sentence): the chosen plan and its "
        "speedup against plain float32 eager with its 95% interval.",
    )
    widget.setFont(style.text_font(12, bold=True))
    return widget


def progress_bar() -> QProgressBar:
    bar = QProgressBar()
    bar.setObjectName("planProgressBar")
    bar.setRange(0, PROGRESS_STEPS)
    bar.setValue(0)
    bar.setTextVisible(False)
    bar.setToolTip("How far the search is through its budget.")
    return bar


def candidates_table() -> QTableWidget:
    """objectName `planCandidatesTable`: every candidate timed, whether it met the criterion
    and why the others lost."""
    table = QTableWidget(0, len(CANDIDATE_COLUMNS))
    table.setObjectName("planCandidatesTable")
    # "Speedup (95%)" on two lines: the column is then as wide as its figures.
    table.setHorizontalHeaderLabels([c.replace(" (", "\n(") for c in CANDIDATE_COLUMNS])
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setWordWrap(True)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    for column in WRAPPING_COLUMNS:  # the tab shares the width left between them
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(False)
    table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    table.setToolTip(
        "Every candidate the search timed: its speedup against plain float32 eager (estimate "
        "and 95% interval), the criterion's value, whether it met the criterion and, if it "
        "lost, why. The chosen one is in bold."
    )
    return table


def snippet_edit() -> QPlainTextEdit:
    """objectName `planSnippetEdit`: the plan as Python to paste, read-only, monospace."""
    edit = QPlainTextEdit()
    edit.setObjectName("planSnippetEdit")
    edit.setReadOnly(True)
    edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    edit.setFont(style.text_font(10, monospace=True))
    edit.setPlaceholderText("The plan's code appears here: Copy code pastes it into yours.")
    edit.setToolTip("The plan as Python: autocast with the keep-set, torch.compile if chosen.")
    return edit
