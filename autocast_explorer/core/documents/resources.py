"""Where the program's data files (presets, style sheets, icons) live.

One function so every front end finds them the same way. They sit in the repository's
`resources/` folder, beside the package, which is where a source checkout and an editable
install (`pip install -e .`, what `make` does) both see them.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Set this to a folder to use other resources (e.g. a packaged copy); empty means the default.
RESOURCES_ENV = "AUTOCAST_EXPLORER_RESOURCES"


def resources_dir() -> Path:
    """The resources/ folder: $AUTOCAST_EXPLORER_RESOURCES, else the one beside the package."""
    override = os.environ.get(RESOURCES_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(__file__).resolve().parents[3] / "resources"


def presets_dir() -> Path:
    """The built-in presets (resources/presets/*.json)."""
    return resources_dir() / "presets"
