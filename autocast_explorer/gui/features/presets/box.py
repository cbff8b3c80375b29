"""The preset picker at the top of the controls: built-in presets (tutorial first), then yours.

Presets are loaded and validated by core.learning.presets (JSON only, size-limited,
schema-checked), imported where used: it brings the typed document models, and the box is
filled after the window's first paint (`ctx.after_first_paint`), "Loading presets…" until then. A
broken user preset is skipped with a message naming the file; a broken built-in one is reported
above the charts. Choosing a preset sets the whole config; a sweep preset also asks the context
for its sweep (`request_sweep`), which fills the Sweeps tab's parameter and values. The combo
always tells the truth: when the controls stop matching the chosen preset it shows "Custom
settings".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.learning.claims import check_claims, preset_claims
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.actions import find_entry
from autocast_explorer.gui.shell.handles import Handle

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.learning.presets import Preset, PresetError
    from autocast_explorer.core.sweeps.spec import SweepSpec
    from autocast_explorer.gui.shell.context import AppContext

CUSTOM_TEXT = "Custom settings"
LOADING_TEXT = "Loading presets…"
USER_SUFFIX = " — yours"


@dataclass(frozen=True)
class PresetDetails:
    """What the Save-as-preset dialog asks for."""

    name: str
    description: str
    include_sweep: bool = False


def same_experiment(a: ExperimentConfig | None, b: ExperimentConfig | None) -> bool:
    """The same experiment whatever the time per mode and threads: how the timing is run does
    not change which preset the controls show."""
    if a is None or b is None:
        return False
    return a.replace(min_time=b.min_time, threads=b.threads) == b


def describe_sweep(sweep: SweepSpec) -> str:
    values = ", ".join(map(str, sweep.values))
    text = f"a sweep over {sweep.param}: {values}"
    if sweep.is_grid:
        text += f" × width {', '.join(map(str, sweep.width_values))}"
    return text


class SavePresetDialog(QDialog):
    """Name, description and (for a sweep preset) whether to keep the sweep."""

    def __init__(self, parent: QWidget | None, name: str, sweep: SweepSpec | None) -> None:
        from autocast_explorer.core.learning.presets import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS

        super().__init__(parent)
        self.setObjectName("savePresetDialog")
        self.setWindowTitle("Save as preset")
        form = QFormLayout(self)
        self.nameEdit = QLineEdit(name)
        self.nameEdit.setObjectName("presetNameEdit")
        self.nameEdit.setMaxLength(MAX_NAME_CHARS)
        self.nameEdit.setToolTip("The name the preset list shows (also gives the file name).")
        self.descriptionEdit = QPlainTextEdit()
        self.descriptionEdit.setObjectName("presetDescriptionEdit")
        self.descriptionEdit.setPlaceholderText("One or two sentences: what to look at.")
        self.descriptionEdit.setToolTip(f"Shown under the list (≤ {MAX_DESCRIPTION_CHARS} chars).")
        self.descriptionEdit.setFixedHeight(90)
        form.addRow("&Name", self.nameEdit)
        form.addRow("&Description", self.descriptionEdit)
        self.sweepCheck = QCheckBox(f"Keep {describe_sweep(sweep)}" if sweep else "")
        self.sweepCheck.setObjectName("presetSweepCheck")
        self.sweepCheck.setChecked(sweep is not None)
        self.sweepCheck.setVisible(sweep is not None)
        self.sweepCheck.setToolTip("Store the sweep of the preset you started from as well.")
        form.addRow(self.sweepCheck)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def details(self) -> PresetDetails:
        return PresetDetails(
            self.nameEdit.text().strip(),
            self.descriptionEdit.toPlainText().strip(),
            self.sweepCheck.isChecked(),
        )


def ask_preset_details(parent: QWidget, name: str, sweep: SweepSpec | None) -> PresetDetails | None:
    """Ask for a name and description (tests replace this function)."""
    dialog = SavePresetDialog(parent, name, sweep)
    try:
        return dialog.details() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def confirm_overwrite(parent: QWidget, path: Path) -> bool:
    """Ask before replacing a preset file (tests replace this function)."""
    answer = QMessageBox.question(
        parent, "Replace preset?", f"{path} exists. Replace it with the current settings?"
    )
    return answer == QMessageBox.StandardButton.Yes


class PresetBox(QGroupBox):
    """objectName `presetBox`; the combo is `presetCombo`. `presetChosen(Preset)` on a choice."""

    presetChosen = Signal(object)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__("Start from a preset")
        self.setObjectName("presetBox")
        self._ctx = ctx
        self._presets: list[Preset] = []
        self._chosen: Preset | None = None
        self._checked_for: Preset | None = None  # the preset whose claims are shown checked
        self._syncing = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addLayout(self._build_picker())
        for label in self._build_notes():
            layout.addWidget(label)
        self._build_actions()
        self.combo.currentIndexChanged.connect(self._on_index_changed)
        ctx.configChanged.connect(self._sync)
        ctx.requestedSweepChanged.connect(self._sync)
        ctx.resultShown.connect(self._check_claims)
        self.combo.setPlaceholderText(LOADING_TEXT)
        ctx.after_first_paint(self.reload)

    # ---- construction ---------------------------------------------------------------------
    def _build_picker(self) -> QHBoxLayout:
        """The preset combo with Save… beside it."""
        row = QHBoxLayout()
        self.combo = QComboBox()
        self.combo.setObjectName("presetCombo")
        self.combo.setPlaceholderText(CUSTOM_TEXT)
        self.combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Never wider than the controls column: long names are elided, the popup shows them.
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(10)
        self.combo.setToolTip(
            "Ready-made experiments: the tutorial's example first, then the other built-in "
            "presets and the ones you saved. Choosing one sets every control (F4 opens the list)."
        )
        self.saveButton = QToolButton()
        self.saveButton.setObjectName("presetSaveButton")
        self.saveButton.setText("Save…")
        row.addWidget(self.combo, 1)
        row.addWidget(self.saveButton)
        return row

    def _build_notes(self) -> tuple[QLabel, ...]:
        """Under the combo: the preset's description, its claims checked, files refused."""
        self.description = QLabel("")
        self.description.setObjectName("presetDescription")
        self.description.setWordWrap(True)
        self.description.setStyleSheet(f"color: {style.MUTED};")
        self.description.setToolTip("What this preset shows.")
        self.claims = QLabel("")
        self.claims.setObjectName("presetClaims")
        self.claims.setWordWrap(True)
        self.claims.setTextFormat(Qt.TextFormat.PlainText)
        self.claims.setToolTip(
            "The preset's statements checked against the run on screen: ✓ holds here, ✗ does "
            "not hold on this CPU and torch, ? this run cannot tell."
        )
        self.claims.hide()
        self.message = QLabel("")
        self.message.setObjectName("presetMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color: {style.WARN};")
        self.message.setToolTip("Preset files that could not be used.")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()
        return self.description, self.claims, self.message

    def _build_actions(self) -> None:
        """Choose (F4) and Save as preset, at the head of the File menu before Open."""
        self.chooseAction = self._ctx.add_action(
            "Choose a pr&eset…",
            self._open_list,
            menu="&File",
            before="Open_result_JSON",
            name="Choose_preset",
            shortcut="F4",  # opens a list, as F4 opens a combo box's; Ctrl+P is Print
            tip="Open the preset list",
        )
        self.saveAction = self._ctx.add_action(
            "Save config as &preset…",
            self.save_as_preset,
            menu="&File",
            before="Open_result_JSON",
            name="Save_as_preset",
            shortcut="Ctrl+Shift+P",
            tip="Save the current config as your own preset",
        )
        self.saveButton.setDefaultAction(self.saveAction)
        self.saveButton.setText("Save…")

    # ---- loading --------------------------------------------------------------------------
    def reload(self) -> list[PresetError]:
        """Read the built-in and user presets again; returns the errors shown."""
        from autocast_explorer.core.learning.presets import (
            PresetError,
            builtin_presets,
            scan_presets,
            sort_presets,
            user_presets_dir,
        )

        errors: list[PresetError] = []
        builtin: list[Preset] = []
        try:
            builtin = builtin_presets()
        except PresetError as exc:
            self._ctx.show_banner(
                f"The built-in presets could not be loaded (please report this): {exc}"
            )
        user, user_errors = scan_presets(user_presets_dir())
        errors += user_errors
        self._presets = builtin + sort_presets(user)
        self._syncing = True
        try:
            self.combo.setPlaceholderText(CUSTOM_TEXT)
            self.combo.clear()
            for i, preset in enumerate(self._presets):
                if i == len(builtin) and i > 0:
                    self.combo.insertSeparator(self.combo.count())
                text = preset.name if preset.builtin else preset.name + USER_SUFFIX
                self.combo.addItem(text, i)
                self.combo.setItemData(
                    self.combo.count() - 1, preset.description, Qt.ItemDataRole.ToolTipRole
                )
            self.combo.setCurrentIndex(-1)
        finally:
            self._syncing = False
        if errors:
            self.message.setText(
                f"Skipped {len(errors)} preset file{'s' if len(errors) > 1 else ''} that could "
                "not be used: " + "; ".join(str(e) for e in errors)
            )
            self.message.show()
        else:
            self.message.hide()
        self._sync()
        return errors

    def presets(self) -> list[Preset]:
        """Every preset listed, in list order."""
        return list(self._presets)

    def chosen(self) -> Preset | None:
        """The preset the controls match now (None: custom settings)."""
        return self._chosen

    def shown_text(self) -> str:
        """What the preset list shows: a preset's name (yours end in ' — yours') or
        'Custom settings' (or 'Loading presets…' until they are read) — the combo's
        placeholder, so currentText() is '' then."""
        if self.combo.currentIndex() >= 0:
            return self.combo.currentText()
        return self.combo.placeholderText()  # "Loading presets…" before they are read

    def index_of(self, preset_id: str) -> int:
        """The combo row of the preset with this id (-1 if not listed)."""
        for row in range(self.combo.count()):
            i = self.combo.itemData(row)
            if i is not None and self._presets[i].id == preset_id:
                return row
        return -1

    # ---- choosing -------------------------------------------------------------------------
    def choose(self, preset_id: str) -> Preset:
        """Choose a preset by id, as if picked from the list; KeyError if not listed."""
        row = self.index_of(preset_id)
        if row < 0:
            raise KeyError(preset_id)
        self.combo.setCurrentIndex(row)
        return self._presets[self.combo.itemData(row)]

    @Slot(int)
    def _on_index_changed(self, row: int) -> None:
        if self._syncing or row < 0:
            return
        i = self.combo.itemData(row)
        if i is None:
            return
        preset = self._presets[i]
        self._chosen = preset
        self._syncing = True
        try:
            self._ctx.set_config(preset.config)
        finally:
            self._syncing = False
        self._ctx.request_sweep(preset.sweep)
        self._show_description(preset)
        self._ctx.show_message(f"Preset: {preset.name}", 4000)
        self.presetChosen.emit(preset)

    def _show_description(self, preset: Preset | None) -> None:
        if preset is None or preset is not self._checked_for:
            self.claims.hide()
            self._checked_for = None
        if preset is None:
            self.description.setText("")
            return
        text = preset.description
        if preset.sweep is not None:
            text += (
                f"<br><b>This preset is {describe_sweep(preset.sweep)}.</b> "
                + self._sweep_hint(preset.sweep)
            )
        self.description.setText(text)

    def _sweep_hint(self, sweep: SweepSpec) -> str:
        title = self._ctx.view_title("sweeps")
        if title is not None:
            return f"It is set up in the {title} tab (F6 runs it); Run measures the config above."
        values = ",".join(map(str, sweep.values))
        return (
            "Run measures the config above; for the sweep use "
            f"<code>autocast-explorer sweep --param {sweep.param} --values {values}</code>."
        )

    def claim_checks(self) -> list[str]:
        """The checked claims shown under the description, one line each ([] when hidden)."""
        return self.claims.text().splitlines() if self._checked_for is not None else []

    @Slot(object)
    def _check_claims(self, result: ExperimentResult) -> None:
        """A result of the chosen built-in preset's config: its claims checked against it."""
        preset = self._chosen
        claims = preset_claims(preset.id) if preset is not None and preset.builtin else ()
        if preset is None or not claims or not same_experiment(preset.config, result.config):
            self.claims.hide()
            self._checked_for = None
            return
        checks = check_claims(claims, result)
        self.claims.setText("\n".join(c.line for c in checks))
        wrong = any(c.holds is False for c in checks)
        self.claims.setStyleSheet(f"color: {style.WARN if wrong else style.OK};")
        self._checked_for = preset
        self.claims.show()

    @Slot()
    def _sync(self) -> None:
        """Point the combo at the preset the controls match, or at 'Custom settings'."""
        if self._syncing:
            return
        try:
            config = self._ctx.config()
        except ConfigError:
            config = None
        chosen = self._chosen
        if chosen is None or not self._matches(chosen, config):
            chosen = next((p for p in self._presets if self._matches(p, config)), None)
        self._chosen = chosen
        self._syncing = True
        try:
            self.combo.setCurrentIndex(self.index_of(chosen.id) if chosen else -1)
        finally:
            self._syncing = False
        self._show_description(chosen)

    def _matches(self, preset: Preset, config: ExperimentConfig | None) -> bool:
        """The controls describe `preset`: its config, and its sweep if it has one is the one
        set up (a lesson sets the tutorial's config without the width sweep's sweep)."""
        if preset.sweep is not None and preset.sweep != self._ctx.requested_sweep:
            return False
        return same_experiment(preset.config, config)

    @Slot()
    def _open_list(self) -> None:
        self.combo.setFocus()
        self.combo.showPopup()

    # ---- saving ---------------------------------------------------------------------------
    @Slot()
    def save_as_preset(self) -> Path | None:
        """Ask for a name and save the current config to the user preset folder."""
        try:
            self._ctx.config()
        except ConfigError as exc:
            self._say(f"Cannot save a preset: fix {exc.field} first ({exc.rule}).")
            return None
        sweep = self._ctx.requested_sweep
        start = self._chosen.name if self._chosen and not self._chosen.builtin else "my preset"
        details = ask_preset_details(self, start, sweep)
        if details is None:
            return None
        return self.save_named(details.name, details.description, details.include_sweep)

    def save_named(
        self,
        name: str,
        description: str = "",
        include_sweep: bool = True,
        replace: bool | None = None,
    ) -> Path | None:
        """Save the current config (and the preset's sweep) as `name`; the file, or None.

        What Save… does after its dialog. An existing file is replaced when `replace` is True,
        kept (with a message) when False, and only after asking when None (the menu's way):
        scripts and tests pass True or False so no modal dialog waits for an answer.
        """
        try:
            config = self._ctx.config()
        except ConfigError as exc:
            self._say(f"Cannot save a preset: fix {exc.field} first ({exc.rule}).")
            return None
        from autocast_explorer.core.learning.presets import (
            PresetError,
            make_preset,
            preset_filename,
            save_preset,
            user_presets_dir,
        )

        sweep = self._ctx.requested_sweep
        name = name.strip()
        try:
            preset = make_preset(
                name,
                description.strip() or f"Saved from the explorer: {name}.",
                config,
                sweep if include_sweep else None,
            )
        except PresetError as exc:
            self._say(f"Cannot save this preset: {exc.problem}.")
            return None
        path = user_presets_dir() / preset_filename(name)
        if path.exists():
            if replace is False:
                self._say(f"{_holder(path, name)} exists already ({path}); it was kept.")
                return None
            if replace is None and not confirm_overwrite(self, path):
                return None
        try:
            save_preset(preset, path)
        except PresetError as exc:
            self._say(f"Cannot save the preset: {exc}")
            return None
        self.reload()
        row = self.index_of(path.stem)
        if row >= 0:
            self._syncing = True
            self.combo.setCurrentIndex(row)
            self._syncing = False
            self._chosen = self._presets[self.combo.itemData(row)]
            self._show_description(self._chosen)
        self._ctx.show_message(f"Saved preset {name!r} to {path}")
        return path

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()


def _holder(path: Path, name: str) -> str:
    """Who holds `path`: the preset of this name, or another whose name gives the same file."""
    from autocast_explorer.core.learning.presets import PresetError, load_preset

    try:
        owner = load_preset(path).name
    except PresetError:
        owner = name
    if owner == name:
        return f"A preset named {name!r}"
    return f"The preset {owner!r} (its name gives the same file name as {name!r})"


#: The preset box (the window's `save_preset` saves through it).
PRESETS = Handle("presets", PresetBox)


def install(ctx: AppContext) -> None:
    """The preset box above the controls, and its File menu entries; `window.presets`."""
    box = PresetBox(ctx)
    ctx.add_control(box)
    file_menu = ctx.menu("&File")
    open_result = find_entry(file_menu, "Open_result_JSON")
    if open_result is not None:
        file_menu.insertSeparator(open_result)
    else:
        file_menu.addSeparator()
    ctx.publish(PRESETS, box)
