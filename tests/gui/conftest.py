"""Every window test runs under the tester's kit's guards (autocast_explorer.testing).

Autouse here: `qt_leak_check` fails any test that leaves a QThread running or a QTimer active
after pytest-qt has closed its widgets (a leaked thread is how "QThread: Destroyed while thread
is still running" aborts happen later), and `explorer_user_files` gives each test its own
settings file and preset folder, never the user's and never shared.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _kit_guards(qtbot, qt_leak_check, explorer_user_files) -> None:
    """The kit's leak check and file isolation (and a QApplication) for every window test."""


@pytest.fixture
def window(explorer, tiny_config):
    """The kit's `explorer` window with the tiny config set (Run enabled)."""
    explorer.set_config(tiny_config)
    assert explorer.runButton.isEnabled()
    return explorer
