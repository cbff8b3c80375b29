"""The "Your model…" page: a spec field with completion and a file picker, its arguments and
input, and the specs run before (the window remembers them in its settings).

Everything typed here becomes config fields; core parses and checks them (the window never
imports the user's code itself: the run does, on the worker, after the trust question).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCompleter,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_rules import parse_widths
from autocast_explorer.core.experiment.families.user.spec import file_factory, parse_spec
from autocast_explorer.core.experiment.model_args import normalise_model_args, parse_model_arg
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.shell import style

SPEC_TIP = (
    "Your own model: hf:TYPE (a Hugging Face architecture from its default config), "
    "torchvision:NAME, timm:NAME, package.module:factory or path/to/file.py:factory. Random "
    "weights; nothing is downloaded. Importing a file runs its code: the window asks first."
)
#: Spec prefixes whose names the completion offers: the only specs its install note is about.
LISTED_PREFIXES = ("torchvision:", "timm:")
#: The config fields this page shows (`fields()` returns them; the others keep their values).
USER_PAGE_FIELDS = ("model", "model_args", "input_shape", "input_image", "seq", "layer_depth")


class UserModelPage(QWidget):
    """Inputs of a user model; `changed` on any edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(5)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.modelSpecEdit = QLineEdit()
        self.modelSpecEdit.setObjectName("modelSpecEdit")
        self.modelSpecEdit.setPlaceholderText("hf:resnet or my_model.py:build")
        self.modelSpecEdit.setToolTip(SPEC_TIP)
        self.modelSpecEdit.setClearButtonEnabled(True)
        self.modelSpecEdit.textChanged.connect(self.changed)
        self.modelSpecEdit.textChanged.connect(self._show_completion_hint)
        self._completions = QStringListModel(self)
        completer = QCompleter(self._completions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.modelSpecEdit.setCompleter(completer)
        self._library_names: tuple[str, ...] | None = None
        self._recent: list[str] = []
        self.modelFileButton = QToolButton()
        self.modelFileButton.setObjectName("modelFileButton")
        self.modelFileButton.setText("File…")
        self.modelFileButton.setToolTip("Pick a Python file; its factory is named after ':'.")
        self.modelFileButton.clicked.connect(self._pick_file)
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.modelSpecEdit, 1)
        line.addWidget(self.modelFileButton)
        self._row(form, "S&pec", row, SPEC_TIP, self.modelSpecEdit)
        self.modelCompletionHint = QLabel("")
        self.modelCompletionHint.setObjectName("modelCompletionHint")
        self.modelCompletionHint.setWordWrap(True)
        self.modelCompletionHint.setToolTip(
            "Why torchvision:/timm: names are not offered as you type, and what to install."
        )
        self.modelCompletionHint.setStyleSheet(f"color: {style.MUTED};")
        self.modelCompletionHint.setVisible(False)
        form.addRow(self.modelCompletionHint)
        self.modelArgsEdit = self._edit(
            "modelArgsEdit",
            "num_hidden_layers=2, hidden_size=64",
            "Keyword arguments of the factory or config overrides, KEY=VALUE separated by "
            "commas (VALUE: a number, true/false, a [list] or text).",
        )
        self._row(form, "A&rguments", self.modelArgsEdit)
        self.inputShapeEdit = self._edit(
            "inputShapeEdit",
            "what the model says",
            "One sample's shape, e.g. 3,224,224 (the batch is added); empty: the model's "
            "example input, timm's pretrained_cfg, or 3,224,224 for torchvision.",
        )
        self._row(form, "Input s&hape", self.inputShapeEdit)
        self.inputImageSpin = self._spin(
            "inputImageSpin",
            0,
            8192,
            "Square side replacing the input's last two sizes (0: keep the model's).",
            "model's",
        )
        self._row(form, "I&mage side", self.inputImageSpin)
        self.userSeqSpin = self._spin(
            "userSeqSpin", 1, 1 << 20, "Token models: tokens per sequence.", ""
        )
        self._row(form, "Se&quence", self.userSeqSpin)
        self.layerDepthSpin = self._spin(
            "layerDepthSpin",
            0,
            64,
            "Layer rows at this depth of the module tree (0: the deepest with at most 40 rows).",
            "auto",
        )
        self._row(form, "La&yer depth", self.layerDepthSpin)

    def _row(
        self, form: QFormLayout, label: str, widget: QWidget, tip: str = "", buddy=None
    ) -> None:
        text = QLabel(label)
        text.setBuddy(buddy or widget)
        text.setToolTip(tip or widget.toolTip())
        form.addRow(text, widget)

    def _edit(self, name: str, placeholder: str, tip: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tip)
        edit.textChanged.connect(self.changed)
        return edit

    def _spin(self, name: str, low: int, high: int, tip: str, special: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setObjectName(name)
        spin.setRange(low, high)
        spin.setToolTip(tip)
        if special:
            spin.setSpecialValueText(special)
        spin.valueChanged.connect(self.changed)
        return spin

    def showEvent(self, event: Any) -> None:
        """Fill the completions when the page first shows (libraries load only then)."""
        super().showEvent(event)
        self.refresh_completions()

    def refresh_completions(self) -> None:
        from autocast_explorer.core.experiment.families.user.loader import (
            EXAMPLE_SPECS,
            library_model_names,
        )

        if self._library_names is None:
            found = library_model_names()
            self._library_names = found.names
            self.modelCompletionHint.setText(found.hint)
            self._show_completion_hint()
        self._completions.setStringList(
            list(dict.fromkeys([*self._recent, *EXAMPLE_SPECS, *self._library_names]))
        )

    @Slot()
    def _show_completion_hint(self) -> None:
        """What to install for torchvision:/timm: names, while such a spec (or none) is typed:
        beside hf:bert or a file's factory it only puzzled."""
        spec = self.modelSpecEdit.text().strip()
        wanted = not spec or spec.startswith(LISTED_PREFIXES)
        self.modelCompletionHint.setVisible(wanted and bool(self.modelCompletionHint.text()))

    def set_recent(self, specs: list[str]) -> None:
        """The specs run before, newest first (the window keeps them in its settings)."""
        self._recent = list(specs)
        if self._library_names is not None:
            self.refresh_completions()

    @Slot()
    def _pick_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Your model's file", "", "Python (*.py)")
        if path:
            self.set_file(path)

    def set_file(self, path: str) -> None:
        """Use `path` with the factory core reads off the file (the one typed for a file
        before, if this file defines it; else `build`; else its first function)."""
        typed = ""
        with contextlib.suppress(ConfigError):
            current = parse_spec(self.modelSpecEdit.text())
            typed = current.factory if current.kind == "file" else ""
        self.modelSpecEdit.setText(f"{path}:{file_factory(path, typed)}")

    # ---- config ---------------------------------------------------------------------------
    def fields(self) -> dict[str, Any]:
        """The config fields these inputs describe (ConfigError names a bad one)."""
        spec = self.modelSpecEdit.text().strip()
        if not spec:
            raise ConfigError("model", "enter your model's spec, e.g. hf:resnet or file.py:build")
        args = [a for a in (p.strip() for p in self.modelArgsEdit.text().split(",")) if a]
        shape = self.inputShapeEdit.text().strip()
        return {
            "model": spec,
            "model_args": normalise_model_args([parse_model_arg(a) for a in _rejoin(args)]),
            "input_shape": parse_widths(shape, "input_shape") if shape else None,
            "input_image": self.inputImageSpin.value() or None,
            "seq": self.userSeqSpin.value(),
            "layer_depth": self.layerDepthSpin.value() or None,
        }

    def set_config(self, config: ExperimentConfig) -> None:
        widgets: list[QWidget] = [self.modelSpecEdit, self.modelArgsEdit, self.inputShapeEdit]
        widgets += [self.inputImageSpin, self.userSeqSpin, self.layerDepthSpin]
        blocked = [w.blockSignals(True) for w in widgets]
        try:
            if config.is_user_model:
                self.modelSpecEdit.setText(config.model)
                self.modelArgsEdit.setText(
                    ", ".join(
                        f"{k}={json.dumps(list(v)) if isinstance(v, tuple) else v}"
                        for k, v in config.model_args
                    )
                )
                shape = config.input_shape
                self.inputShapeEdit.setText(",".join(map(str, shape)) if shape else "")
                self.inputImageSpin.setValue(config.input_image or 0)
                self.layerDepthSpin.setValue(min(config.layer_depth or 0, 64))
            self.userSeqSpin.setValue(min(config.seq, self.userSeqSpin.maximum()))
        finally:
            for widget, was in zip(widgets, blocked, strict=True):
                widget.blockSignals(was)


def _rejoin(parts: list[str]) -> list[str]:
    """Commas inside a [list] value split it: join such pieces back ('d=[1', '2]' → 'd=[1,2]')."""
    out: list[str] = []
    for part in parts:
        if out and out[-1].count("[") > out[-1].count("]"):
            out[-1] += "," + part
        else:
            out.append(part)
    return out
