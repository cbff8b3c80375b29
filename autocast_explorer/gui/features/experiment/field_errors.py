"""Inline errors: core's ConfigError shown in a row under the input of the field it names.

Validation is core's (ExperimentConfig raises ConfigError naming the field); the controls only
show the message where it belongs and outline the inputs it is about.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from autocast_explorer.core.experiment.config import FAMILY_FIELDS
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.shell import style

#: Guard errors (core.guards) name these pseudo-fields; they are shown under batch.
GUARD_FIELDS = ("memory", "time")


def error_fields(exc: ConfigError) -> dict[str, str]:
    """The inline message for a ConfigError: its rule, shown at the field it names."""
    if exc.field in GUARD_FIELDS:
        title = "Too much memory" if exc.field == "memory" else "Too slow"
        return {exc.field: f"{title}: {exc.rule}"}
    return {exc.field: exc.rule}


class FieldErrors:
    """One hidden message row per field (plus 'family' and 'guard'), shown when named."""

    def __init__(self) -> None:
        self._labels: dict[str, QLabel] = {}
        self._forms: dict[str, QFormLayout] = {}

    def add_row(self, form: QFormLayout, field: str) -> None:
        """The message row of `field` (objectName `<field>Error`), hidden until needed."""
        error = QLabel("")
        error.setObjectName(f"{field}Error")
        error.setWordWrap(True)
        error.setStyleSheet(
            f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 3px;"
            "border-radius: 3px;"
        )
        error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(error)
        form.setRowVisible(error, False)
        self._labels[field] = error
        self._forms[field] = form

    def show(
        self,
        errors: dict[str, str],
        inputs: dict[str, list[QWidget]],
        family_inputs: dict[str, list[QWidget]],
    ) -> set[str]:
        """Show each message under its field (guard fields under batch, family parameters
        under the family's inputs, naming them); hide the rest; outline the inputs named.
        Returns the rows now showing a message."""
        shown: dict[str, str] = {}
        for field, message in errors.items():
            key = "guard" if field in GUARD_FIELDS else field
            if key in FAMILY_FIELDS:
                shown["family"] = f"{field}: {message}"
                continue
            # A field without an input of its own is shown at the top.
            shown[key if key in self._labels else "family"] = message
        for key, label in self._labels.items():
            message = shown.get(key, "")
            label.setText(message)
            self._forms[key].setRowVisible(label, bool(message))
        invalid = set(shown) | {f for f in errors if f in FAMILY_FIELDS}
        if "guard" in invalid:
            invalid |= {"widths", "batch", *family_inputs}
        for field, widgets in {**inputs, **family_inputs}.items():
            for widget in widgets:
                widget.setStyleSheet(
                    f"border: 2px solid {style.BAD}; border-radius: 3px;"
                    if field in invalid
                    else ""
                )
        return set(shown)

    def texts(self) -> dict[str, str]:
        """Messages now shown, by field ('guard' for memory/time guards)."""
        return {k: label.text() for k, label in self._labels.items() if label.text()}
