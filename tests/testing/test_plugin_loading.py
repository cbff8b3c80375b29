"""The kit loads once, costs nothing when unused, and picks a platform Qt can use headless."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import autocast_explorer.testing as kit
from autocast_explorer.testing.plugin import HEADLESS_PLATFORM, headless_platform

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("PySide6", "shiboken6", "pyqtgraph", "torch", "numpy")


@pytest.mark.process
def test_importing_the_plugin_loads_no_qt_torch_or_numpy():
    code = (
        "import sys, autocast_explorer.testing as kit\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_the_entry_point_is_named_after_the_module_so_it_never_loads_twice():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {kit.__name__: kit.__name__}


def test_this_session_registered_the_kit_once_under_its_module_name(request):
    manager = request.config.pluginmanager
    assert manager.get_plugin(kit.__name__) is kit
    assert [p for p in manager.get_plugins() if p is kit] == [kit]


def test_every_public_name_resolves():
    for name in kit.__all__:
        assert getattr(kit, name) is not None, name
    assert set(kit._LAZY) <= set(kit.__all__)


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({}, "linux", HEADLESS_PLATFORM),
        ({"DISPLAY": ":0"}, "linux", None),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", None),
        ({"QT_QPA_PLATFORM": "xcb"}, "linux", None),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", None),
        ({}, "freebsd14", HEADLESS_PLATFORM),
        ({}, "darwin", None),
        ({}, "win32", None),
    ],
)
def test_offscreen_only_where_qt_would_find_no_display(environ, platform, expected):
    assert headless_platform(environ, platform) == expected


@pytest.mark.process
@pytest.mark.slow
def test_a_project_without_a_display_runs_the_explorer_fixture(pytester, monkeypatch):
    """A fresh process with no $DISPLAY and no $QT_QPA_PLATFORM: Qt must not abort."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(
        test_headless="""
        import os

        from autocast_explorer.testing import run_and_wait


        def test_run(explorer, tiny_config):
            assert os.environ["QT_QPA_PLATFORM"] == "offscreen"
            result = run_and_wait(explorer, tiny_config)
            assert result.config == tiny_config
            assert explorer.last_result is result
        """
    )
    outcome = pytester.runpytest_subprocess("-p", kit.__name__, "-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=1)
