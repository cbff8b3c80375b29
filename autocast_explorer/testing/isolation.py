"""Give a test its own settings file and preset folder: never the user's, never shared.

The window remembers its config, layout, text scale and lesson step in the INI file named by
$AUTOCAST_EXPLORER_SETTINGS, and lists the user's own presets from
$XDG_CONFIG_HOME/autocast-explorer/presets. Pointing both into a temporary folder makes every
test start like a first start, and nothing a test saves reaches the next test or the person
running the suite. Qt's own per-user INI locations move too, in case anything builds a
QSettings of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

#: The base folder core.learning.presets.user_presets_dir reads (the XDG convention).
CONFIG_HOME_ENV = "XDG_CONFIG_HOME"


@dataclass(frozen=True)
class UserFiles:
    """Where the window reads and writes a user's files during one test."""

    #: The settings INI file ($AUTOCAST_EXPLORER_SETTINGS); absent until the window saves.
    settings_file: Path
    #: The folder the preset list reads and Save as preset writes; absent, as on a first start.
    presets_dir: Path


def isolate_user_files(root: Path, monkeypatch: pytest.MonkeyPatch) -> UserFiles:
    """Point the window's settings and user presets under `root` (undone by `monkeypatch`)."""
    from PySide6.QtCore import QSettings

    from autocast_explorer.core.learning.presets import user_presets_dir
    from autocast_explorer.gui.window.settings import SETTINGS_ENV  # the window's own name for it

    config_home = root / "config-home"
    settings_file = config_home / "settings.ini"
    monkeypatch.setenv(SETTINGS_ENV, str(settings_file))
    monkeypatch.setenv(CONFIG_HOME_ENV, str(config_home))
    # Asked of core after the move, so the folder is the one the window really uses.
    files = UserFiles(settings_file=settings_file, presets_dir=user_presets_dir())
    qt_home = str(config_home / "qt")
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):
            QSettings.setPath(fmt, scope, qt_home)
    return files
