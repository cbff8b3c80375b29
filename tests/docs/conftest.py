"""The documentation's examples run with the same guards as the window tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _kit_guards(qtbot, qt_leak_check, explorer_user_files) -> None:
    """The kit's leak check and file isolation: an example must not touch the user's settings."""
