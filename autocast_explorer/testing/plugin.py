"""The pytest fixtures and hooks of the tester's kit (loaded through the `pytest11` entry point).

pytest imports this module in every session of every project installed next to the package,
so importing it costs nothing: no Qt, no torch, no pyqtgraph at import time. Each fixture
imports what it needs when a test asks for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.gui import MainWindow
    from autocast_explorer.testing.dialogs import FileDialogStub
    from autocast_explorer.testing.isolation import UserFiles
    from autocast_explorer.testing.leaks import QtLeakTracker
    from autocast_explorer.testing.noise import TimingNoise

QPA_ENV = "QT_QPA_PLATFORM"
HEADLESS_PLATFORM = "offscreen"


def headless_platform(environ: Mapping[str, str], platform: str) -> str | None:
    """'offscreen' where Qt would find no display (and no platform was chosen), else None.

    Linux and the BSDs need $DISPLAY or $WAYLAND_DISPLAY; without one Qt aborts the whole
    process at the first QApplication. macOS and Windows always have a window server.
    """
    if environ.get(QPA_ENV, "").strip():
        return None
    if platform.startswith(("darwin", "win32", "cygwin")):
        return None
    if environ.get("DISPLAY", "").strip() or environ.get("WAYLAND_DISPLAY", "").strip():
        return None
    return HEADLESS_PLATFORM


def use_headless_platform_if_needed(environ: MutableMapping[str, str] = os.environ) -> None:
    platform = headless_platform(environ, sys.platform)
    if platform is not None:
        environ[QPA_ENV] = platform


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    # trylast: a display-providing plugin (pytest-xvfb) sets $DISPLAY in its own configure.
    use_headless_platform_if_needed()


@pytest.fixture
def explorer_user_files(tmp_path, monkeypatch) -> UserFiles:
    """An empty settings file location and user-preset folder for this test only."""
    from autocast_explorer.testing.isolation import isolate_user_files

    return isolate_user_files(tmp_path, monkeypatch)


@pytest.fixture
def qt_leak_check() -> Iterator[QtLeakTracker]:
    """Fail the test (at teardown) if it leaves a QThread running or a QTimer active.

    pytest-qt closes the widgets a test registered before fixtures are torn down, so a window
    that stops its threads on close passes. Leaks are stopped after being reported.
    """
    from autocast_explorer.testing.leaks import QtLeakTracker

    tracker = QtLeakTracker()
    tracker.install()
    try:
        yield tracker
    finally:
        tracker.uninstall()
    leaks = tracker.stop_leaks()
    if leaks:
        pytest.fail("left running after the test:\n" + "\n".join(leaks), pytrace=False)


@pytest.fixture
def explorer(request, explorer_user_files, qt_leak_check) -> Iterator[MainWindow]:
    """A shown MainWindow with PyTorch loaded (Run enabled for a valid config).

    Own settings and preset folder (`explorer_user_files`); closed after the test, which must
    leave no QThread running and no QTimer active (`qt_leak_check`).
    """
    try:
        qtbot = request.getfixturevalue("qtbot")
    except pytest.FixtureLookupError:
        pytest.fail("the explorer fixture needs pytest-qt: pip install pytest-qt", pytrace=False)
    from autocast_explorer.gui import MainWindow
    from autocast_explorer.testing.running import wait_for_engine

    window = MainWindow()
    qtbot.addWidget(window)  # pytest-qt closes it after the test, before the leak check
    window.show()
    wait_for_engine(window)
    yield window
    import shiboken6

    if shiboken6.isValid(window) and window.isVisible():
        window.close()  # the test took the window from qtbot's list
    if shiboken6.isValid(window) and window.runner.is_running():
        pytest.fail("the window's runner was still running after it closed", pytrace=False)


@pytest.fixture
def tiny_config() -> ExperimentConfig:
    """The smallest config that runs every path (capture, guards, timing) in well under 1 s."""
    from autocast_explorer.testing.configs import tiny_experiment

    return tiny_experiment()


@pytest.fixture
def file_dialogs(monkeypatch) -> FileDialogStub:
    """QFileDialog's static methods answer what `file_dialogs.answer(...)` queued.

    `file_dialogs.asked` records each dialog opened; one opened with nothing queued fails.
    """
    from autocast_explorer.testing.dialogs import FileDialogStub

    stub = FileDialogStub()
    stub.install(monkeypatch)
    return stub


@pytest.fixture
def timing_noise(monkeypatch) -> TimingNoise:
    """Decide what the timing of this test's runs sees: `clear(speedup)`, `busy(speedup,
    other_cores)` or `noisy()`, whatever the machine's own load (docs/testing.md)."""
    from autocast_explorer.testing.noise import TimingNoise

    return TimingNoise(monkeypatch)
