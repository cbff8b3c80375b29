"""Where the program's data files (presets, JSON Schemas, the icon) live.

They live in the checkout's top-level `resources/` folder and install as the package
`autocast_explorer.resources` (setup.py maps it), found with importlib.resources, so a wheel
installed anywhere and an editable install see the same files.
One function so every front end finds them the same way.
"""

from __future__ import annotations

import atexit
import os
from contextlib import ExitStack
from functools import cache
from importlib.resources import as_file, files
from pathlib import Path

#: Set this to a folder to use other resources (e.g. a test's copy); empty means the packaged ones.
RESOURCES_ENV = "AUTOCAST_EXPLORER_RESOURCES"

_PACKAGE = "autocast_explorer.resources"


@cache
def _packaged_dir() -> Path:
    """The packaged folder as a real path.

    Installed from a wheel or a checkout it already is one; from a zip (zipimport) as_file
    extracts it once, kept until the interpreter exits, because presets are listed with glob.
    """
    traversable = files(_PACKAGE)
    if isinstance(traversable, Path):
        return traversable
    stack = ExitStack()
    atexit.register(stack.close)
    return stack.enter_context(as_file(traversable))


def resources_dir() -> Path:
    """The resources folder: $AUTOCAST_EXPLORER_RESOURCES, else the package's own."""
    override = os.environ.get(RESOURCES_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return _packaged_dir()


def presets_dir() -> Path:
    """The built-in presets (resources/presets/*.json)."""
    return resources_dir() / "presets"


def schemas_dir() -> Path:
    """The published JSON Schemas (resources/schemas/*.schema.json)."""
    return resources_dir() / "schemas"


def icon_path() -> Path:
    """The window icon (SVG)."""
    return resources_dir() / "icons" / "autocast-explorer.svg"
