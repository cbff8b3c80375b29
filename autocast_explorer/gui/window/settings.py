"""Remembering the window between sessions (QSettings): last config, geometry, presentation.

Everything read back is treated as untrusted input: a value that does not parse or is out of
range falls back to its default and the window says which one (never a crash). The config is
stored as JSON and rebuilt through ExperimentConfig.from_dict, so it is validated like any other
input. QSettings writes its INI file through QSaveFile (temporary file + rename), so a crash
mid-save keeps the previous file.

Where: the INI file named by $AUTOCAST_EXPLORER_SETTINGS (tests, portable set-ups), else Qt's
per-user INI location for "autocast-explorer" (~/.config/autocast-explorer/autocast-explorer.ini
on Linux). Reading is defensive to the end: any exception while restoring a key (not only the
ones a parser expects) drops that key and names it, so no stored value can stop the window from
starting; `autocast-explorer --reset-settings` removes the file without starting the window.
"""

from __future__ import annotations

import json
import os
from typing import Any, Protocol

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu, QStatusBar

from autocast_explorer.core.documents.reader import DocumentFormatError, parse_json
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.features.lessons.dock import LESSONS_PANEL
from autocast_explorer.gui.features.presentation.mode import PRESENTATION, PresentationState
from autocast_explorer.gui.shell.actions import set_tip
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.experiment_state import ExperimentState


class RememberedWindow(Protocol):
    """What the keeper needs of the window that installs it (typed here, so this module does
    not import the window back)."""

    settingsKeeper: SettingsKeeper

    @property
    def context(self) -> AppContext: ...  # the presentation and lessons handles, by key
    @property
    def experiment_state(self) -> ExperimentState: ...

    @property
    def messageBanner(self) -> QLabel: ...  # read only: a QLabel subclass also qualifies

    def set_config(self, config: ExperimentConfig) -> None: ...
    def menu(self, name: str) -> QMenu: ...
    def statusBar(self) -> QStatusBar: ...
    def saveState(self) -> QByteArray: ...
    def layout_state(self) -> QByteArray: ...
    def restore_layout(self, state: QByteArray) -> bool: ...
    def saveGeometry(self) -> QByteArray: ...
    def restoreGeometry(self, geometry: QByteArray) -> bool: ...
    def windowState(self) -> Qt.WindowState: ...
    def setWindowState(self, state: Qt.WindowState) -> None: ...
    def isFullScreen(self) -> bool: ...
    def showNormal(self) -> None: ...
    def resize(self, width: int, height: int) -> None: ...
    def installEventFilter(self, watcher: QObject) -> None: ...


SETTINGS_ENV = "AUTOCAST_EXPLORER_SETTINGS"
ORGANIZATION = APPLICATION = "autocast-explorer"
MAX_CONFIG_CHARS = 16_384
#: No stored value of ours is longer (the window layout is a few KB); a longer one is refused
#: before it is parsed or shown.
MAX_SETTING_CHARS = 65_536

CONFIG_KEY = "experiment/config"
GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"
SCALE_KEY = "presentation/font_scale"
THEME_KEY = "presentation/theme"
HIDDEN_KEY = "presentation/controls_hidden"
LESSON_KEY = "lessons/step"


def open_settings() -> QSettings:
    """The settings store: $AUTOCAST_EXPLORER_SETTINGS if set, else the per-user INI file."""
    path = os.environ.get(SETTINGS_ENV, "").strip()
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION
    )


class SettingsError(ValueError):
    """One stored value that cannot be used; str() says which and why."""


def reset_settings_file() -> str:
    """Forget every stored setting (the file stays, empty); returns the file's path."""
    store = open_settings()
    store.clear()
    store.sync()
    return store.fileName()


def parse_config(raw: Any) -> ExperimentConfig:
    if not isinstance(raw, str):
        raise SettingsError("last config: not a JSON text")
    if len(raw) > MAX_CONFIG_CHARS:
        raise SettingsError("last config: too long")
    try:
        data = parse_json(raw, MAX_CONFIG_CHARS * 4)
    except DocumentFormatError as exc:
        raise SettingsError(f"last config: {exc.detail}") from None
    if not isinstance(data, dict):
        raise SettingsError("last config: not a JSON object")
    try:
        return ExperimentConfig.from_dict(data)
    except ConfigError as exc:
        raise SettingsError(f"last config: {exc}") from None
    except (TypeError, ValueError, KeyError) as exc:
        raise SettingsError(f"last config: {exc}") from None


def parse_scale(raw: Any) -> float:
    try:
        value = float(str(raw))
    except ValueError:
        raise SettingsError(f"text scale: {str(raw)[:40]!r} is not a number") from None
    try:
        PresentationState(font_scale=value)
    except ValueError as exc:
        raise SettingsError(f"text scale: {exc}") from None
    return value


def parse_theme(raw: Any) -> str:
    try:
        return PresentationState(theme=str(raw)).theme
    except ValueError as exc:
        raise SettingsError(f"theme: {exc}") from None


def parse_bool(raw: Any, what: str) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise SettingsError(f"{what}: {str(raw)[:40]!r} is not true or false")


def parse_int(raw: Any, what: str, low: int, high: int) -> int:
    try:
        value = int(str(raw))
    except ValueError:
        raise SettingsError(f"{what}: {str(raw)[:40]!r} is not a whole number") from None
    if not low <= value <= high:
        raise SettingsError(f"{what}: {value} is not between {low} and {high}")
    return value


class SettingsKeeper(QObject):
    """Restores the window at start, saves it on close; View › Reset to defaults.

    `problems` lists what could not be restored at start (also shown above the charts).
    """

    def __init__(self, window: RememberedWindow) -> None:
        assert isinstance(window, QObject)  # the window is a QObject: the keeper's parent
        super().__init__(window)
        self.setObjectName("settingsKeeper")
        self._window = window
        self.problems: list[str] = []
        self._default_state = window.saveState()
        window.installEventFilter(self)
        view = window.menu("&View")
        view.addSeparator()
        self.resetAction = QAction("&Reset to defaults", window)
        self.resetAction.setObjectName("Reset_to_defaults")
        self.resetAction.setShortcut(QKeySequence("Ctrl+Shift+R"))
        set_tip(
            self.resetAction,
            "Forget the saved config, window layout, text scale and theme; start as new",
        )
        self.resetAction.triggered.connect(self.reset_to_defaults)
        view.addAction(self.resetAction)

    # ---- restore --------------------------------------------------------------------------
    def restore(self) -> list[str]:
        """Apply what was saved; every unusable value falls back to its default."""
        w = self._window
        store = open_settings()
        problems: list[str] = []
        if store.status() != QSettings.Status.NoError:
            problems.append(f"the settings file {store.fileName()} could not be read")
            self._report(problems)
            return problems

        def read(key: str, parse, apply) -> None:
            try:
                raw = store.value(key)
                if raw is None:
                    return
                size = raw.size() if isinstance(raw, QByteArray) else 0
                if isinstance(raw, str | bytes):
                    size = len(raw)
                if size > MAX_SETTING_CHARS:  # parsed, echoed or laid out, megabytes freeze
                    raise SettingsError(f"{key}: too long ({size:,} characters)")
                apply(parse(raw))
            except SettingsError as exc:
                problems.append(str(exc))
                store.remove(key)
            except Exception as exc:  # any stored value must fall back, never stop the window
                problems.append(f"{key}: unusable ({type(exc).__name__})")
                store.remove(key)

        read(CONFIG_KEY, parse_config, w.set_config)
        read(GEOMETRY_KEY, _bytes("window size and position"), self._restore_geometry)
        read(STATE_KEY, _bytes("window layout"), self._restore_state)
        state: dict[str, Any] = {}
        read(SCALE_KEY, parse_scale, lambda v: state.__setitem__("font_scale", v))
        read(THEME_KEY, parse_theme, lambda v: state.__setitem__("theme", v))
        read(
            HIDDEN_KEY,
            lambda raw: parse_bool(raw, "controls hidden"),
            lambda v: state.__setitem__("controls_hidden", v),
        )
        if state:
            w.context.handle(PRESENTATION).set_state(PresentationState(**state))
        lessons = w.context.handle(LESSONS_PANEL)
        last = len(lessons.steps()) - 1
        read(LESSON_KEY, lambda raw: parse_int(raw, "lesson step", 0, last), lessons.go_to)
        self._report(problems)
        return problems

    def _restore_geometry(self, data: QByteArray) -> None:
        w = self._window
        if not w.restoreGeometry(data):
            raise SettingsError("window size and position: not readable")
        # Never come back in full screen (another monitor, another room): F11 is one key away.
        if w.windowState() & Qt.WindowState.WindowFullScreen:
            w.setWindowState(w.windowState() & ~Qt.WindowState.WindowFullScreen)

    def _restore_state(self, data: QByteArray) -> None:
        if not self._window.restore_layout(data):
            raise SettingsError("window layout: not readable")

    def _report(self, problems: list[str]) -> None:
        self.problems = problems
        if problems:
            banner = self._window.messageBanner
            banner.setText(
                "Some saved settings could not be used, so their defaults are in effect: "
                + "; ".join(problems)
                + "."
            )
            banner.show()

    # ---- save -----------------------------------------------------------------------------
    def save(self) -> None:
        """Write the last valid config, window geometry and layout, and presentation state."""
        w = self._window
        store = open_settings()
        # The experiment state's config: the last valid one (an edit core refused is not kept).
        store.setValue(CONFIG_KEY, json.dumps(w.experiment_state.config.to_dict()))
        store.setValue(GEOMETRY_KEY, w.saveGeometry())
        store.setValue(STATE_KEY, w.layout_state())
        state = w.context.handle(PRESENTATION).state()
        store.setValue(SCALE_KEY, f"{state.font_scale:g}")
        store.setValue(THEME_KEY, state.theme)
        store.setValue(HIDDEN_KEY, "true" if state.controls_hidden else "false")
        store.setValue(LESSON_KEY, str(w.context.handle(LESSONS_PANEL).step_index()))
        store.sync()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.Close:
            self.save()
        return False

    # ---- reset ----------------------------------------------------------------------------
    @Slot()
    def reset_to_defaults(self) -> None:
        """Forget everything stored and put the window back as a first start shows it."""
        w = self._window
        store = open_settings()
        store.clear()
        store.sync()
        if w.isFullScreen():
            w.showNormal()
        w.restore_layout(self._default_state)
        w.resize(1280, 800)
        w.context.handle(PRESENTATION).set_state(PresentationState())
        w.set_config(ExperimentConfig())
        w.context.handle(LESSONS_PANEL).go_to(0)
        w.messageBanner.hide()
        w.statusBar().showMessage("Settings reset to defaults.", 5000)


def _bytes(what: str):
    def parse(raw: Any) -> QByteArray:
        data = QByteArray(raw) if isinstance(raw, QByteArray | bytes) else QByteArray()
        if not data.isEmpty():
            return data
        raise SettingsError(f"{what}: not stored as binary data")

    return parse


def install_settings(window: RememberedWindow) -> SettingsKeeper:
    """Restore the saved state now; save on close. `window.settingsKeeper` afterwards."""
    keeper = SettingsKeeper(window)
    window.settingsKeeper = keeper
    try:
        keeper.restore()
    except Exception as exc:  # the last net: a window that cannot start helps nobody
        keeper._report([f"the saved settings could not be used ({type(exc).__name__})"])
    return keeper


# ---- your own model: the specs run before and the files agreed to ------------------------------
RECENT_SPECS_KEY = "models/recent_specs"
TRUSTED_FILES_KEY = "models/trusted_files"
MAX_RECENT_SPECS = 20
MAX_TRUSTED_FILES = 200


def _stored_texts(key: str) -> list[str]:
    """A JSON list of texts kept under `key` ([] for anything else: settings are untrusted)."""
    try:
        data = json.loads(str(open_settings().value(key, "[]")))
    except ValueError:
        return []
    return [t for t in data if isinstance(t, str)] if isinstance(data, list) else []


def recent_specs() -> list[str]:
    """The model specs run before, newest first."""
    return [s for s in _stored_texts(RECENT_SPECS_KEY) if ":" in s][:MAX_RECENT_SPECS]


def remember_spec(spec: str) -> None:
    specs = [spec, *(s for s in recent_specs() if s != spec)][:MAX_RECENT_SPECS]
    open_settings().setValue(RECENT_SPECS_KEY, json.dumps(specs))


def is_trusted_file(path: str) -> bool:
    """Whether the user already agreed to import the model file `path` (asked once per file)."""
    return path in _stored_texts(TRUSTED_FILES_KEY)


def trust_file(path: str) -> None:
    paths = [*_stored_texts(TRUSTED_FILES_KEY), path][-MAX_TRUSTED_FILES:]
    open_settings().setValue(TRUSTED_FILES_KEY, json.dumps(paths))
