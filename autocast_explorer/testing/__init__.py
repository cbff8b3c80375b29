"""The tester's kit: a pytest plugin for driving the explorer window (docs/testing.md).

Installing the package is enough: the `pytest11` entry point loads this module, whose fixtures
are `explorer` (a ready MainWindow), `tiny_config`, `file_dialogs`, `explorer_user_files`,
`qt_leak_check` and `timing_noise`. The helpers (`run_and_wait` …) import Qt on first use, so
having the plugin installed costs a test session nothing when it is not used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autocast_explorer.testing.plugin import (
    explorer,
    explorer_user_files,
    file_dialogs,
    pytest_configure,
    qt_leak_check,
    timing_noise,
    tiny_config,
)

if TYPE_CHECKING:
    from autocast_explorer.testing.configs import tiny_experiment
    from autocast_explorer.testing.dialogs import (
        DialogRequest,
        FileDialogStub,
        UnexpectedFileDialog,
    )
    from autocast_explorer.testing.isolation import UserFiles
    from autocast_explorer.testing.leaks import QtLeakTracker
    from autocast_explorer.testing.noise import TimingNoise
    from autocast_explorer.testing.running import (
        ENGINE_TIMEOUT_MS,
        RUN_TIMEOUT_MS,
        RunCancelled,
        RunDidNotFinish,
        RunFailed,
        RunNotStarted,
        RunTimedOut,
        run_and_wait,
        wait_for_engine,
    )

#: Public name -> the module that defines it (imported when first asked for).
_LAZY = {
    "run_and_wait": "running",
    "wait_for_engine": "running",
    "RunDidNotFinish": "running",
    "RunNotStarted": "running",
    "RunFailed": "running",
    "RunCancelled": "running",
    "RunTimedOut": "running",
    "RUN_TIMEOUT_MS": "running",
    "ENGINE_TIMEOUT_MS": "running",
    "FileDialogStub": "dialogs",
    "DialogRequest": "dialogs",
    "UnexpectedFileDialog": "dialogs",
    "QtLeakTracker": "leaks",
    "UserFiles": "isolation",
    "tiny_experiment": "configs",
    "TimingNoise": "noise",
}

# The fixtures, the hook, and the helpers resolved lazily through _LAZY.
__all__ = [
    "ENGINE_TIMEOUT_MS",
    "RUN_TIMEOUT_MS",
    "DialogRequest",
    "FileDialogStub",
    "QtLeakTracker",
    "RunCancelled",
    "RunDidNotFinish",
    "RunFailed",
    "RunNotStarted",
    "RunTimedOut",
    "TimingNoise",
    "UnexpectedFileDialog",
    "UserFiles",
    "explorer",
    "explorer_user_files",
    "file_dialogs",
    "pytest_configure",
    "qt_leak_check",
    "run_and_wait",
    "timing_noise",
    "tiny_config",
    "tiny_experiment",
    "wait_for_engine",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
