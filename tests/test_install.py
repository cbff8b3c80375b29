"""Install the program as a user would: a wheel, not editable, in a fresh venv, used from
another folder. The editable install the rest of the suite runs on sees the checkout's files,
so it cannot notice a wheel that lacks its data (presets, schemas, icon).

Offline and quick: the wheel is built with the venv's own setuptools (no build isolation, no
index), and the fresh venv reaches the already-installed torch, PySide6, numpy and pyqtgraph
through a .pth line naming their site-packages (a plain path: the .pth files in that folder,
among them the editable install's hook, are not run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import autocast_explorer
from autocast_explorer.core.learning.presets import builtin_presets

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "autocast_explorer", "resources")
BUILD_TIMEOUT_S = 300
PIP = (sys.executable, "-m", "pip")
PURELIB = "import sysconfig; print(sysconfig.get_path('purelib'))"

#: Opens the window through the gui-script's own entry point, reads it once it is shown, closes it.
WINDOW_CHECK = """
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QMainWindow
import autocast_explorer
from autocast_explorer.cli import window_main

app = QApplication(["autocast-explorer"])
seen = {}

def inspect():
    window = next(w for w in app.topLevelWidgets() if isinstance(w, QMainWindow) and w.isVisible())
    if not window.features_installed:  # the app's window builds the rest after its first paint
        window.featuresInstalled.connect(inspect)
        return
    combo = window.findChild(QComboBox, "presetCombo")
    banner = window.findChild(QLabel, "messageBanner")
    seen["presets"] = [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]
    seen["banner"] = banner.text() if banner.isVisible() else ""
    seen["icon"] = not app.windowIcon().isNull()
    seen["package"] = autocast_explorer.__file__
    help_window = window.show_help()
    seen["help_headings"] = help_window.heading_titles()
    seen["help_at_section"] = help_window.show_section()
    window.close()

QTimer.singleShot(0, inspect)
code = window_main()
print(json.dumps(seen))
sys.exit(code)
"""


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = BUILD_TIMEOUT_S):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """Build the wheel from a copy of the sources and install it into a fresh venv."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    dist = base / "dist"
    _run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)],
        base,
        env,
    )
    (wheel,) = dist.glob("autocast_explorer-*.whl")

    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", PURELIB], base, env).stdout.strip())
    # The project venv's site-packages: where torch, PySide6, numpy and pyqtgraph already are.
    (purelib / "_project_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # Dependencies are checked, not skipped: pip must find each one already installed.
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)],
        base,
        env,
    )
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return {"wheel": wheel, "venv": venv, "python": python, "cwd": elsewhere, "home": base}


def _user_env(installed: dict[str, Path]) -> dict[str, str]:
    """A user's environment: no PYTHONPATH, no resource override, its own config folders."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "AUTOCAST_EXPLORER_RESOURCES", "AUTOCAST_EXPLORER_SETTINGS")
    }
    home = installed["home"] / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), QT_QPA_PLATFORM="offscreen")
    env["PATH"] = f"{installed['venv'] / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_wheel_holds_the_data_and_the_metadata(installed):
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        names = set(wheel.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = wheel.read(metadata).decode()
        entry_points = wheel.read(metadata.replace("METADATA", "entry_points.txt")).decode()
    for preset in builtin_presets():
        assert f"autocast_explorer/resources/presets/{preset.path.name}" in names
    for name in ("result", "sweep", "ops", "preset", "plan"):
        assert f"autocast_explorer/resources/schemas/{name}.schema.json" in names
    assert "autocast_explorer/resources/icons/autocast-explorer.svg" in names
    assert "autocast_explorer/resources/desktop/autocast-explorer.desktop" in names
    assert "autocast_explorer/py.typed" in names
    assert not any("/tests/" in n or n.startswith("tests/") for n in names)
    assert f"Version: {autocast_explorer.__version__}\n" in meta
    assert "License-Expression: BSD-3-Clause\n" in meta
    assert "[gui_scripts]\nautocast-explorer-window = autocast_explorer.cli:window_main" in (
        entry_points
    )
    assert "[console_scripts]\nautocast-explorer = autocast_explorer.__main__:entry" in entry_points


def test_installed_cli_runs_a_preset_from_another_folder(installed):
    env = _user_env(installed)
    version = _run(["autocast-explorer", "--version"], installed["cwd"], env, 60)
    assert version.stdout.strip() == f"autocast-explorer {autocast_explorer.__version__}"
    where = _run(
        [
            str(installed["python"]),
            "-c",
            "import autocast_explorer; print(autocast_explorer.__file__)",
        ],
        installed["cwd"],
        env,
        60,
    )
    assert Path(where.stdout.strip()).is_relative_to(installed["venv"])
    args = [
        "autocast-explorer",
        "run",
        "--preset",
        "tutorial",
        "--min-time",
        "0.02",
        "--threads",
        "1",
    ]
    done = _run(args, installed["cwd"], env, 300)
    tutorial = next(p for p in builtin_presets() if p.is_tutorial).config
    assert done.stdout.startswith(
        f"Autocast Explorer · widths {','.join(map(str, tutorial.widths))} · "
        f"batch {tutorial.batch} · {tutorial.activation} · head {tutorial.head} · "
        f"autocast dtype {tutorial.dtype} · seed {tutorial.seed}\n"
    )
    assert "fc3    Linear      plain float32→float32    autocast bfloat16→bfloat16" in done.stdout
    assert "predictions agree on" in done.stdout
    assert done.stderr == ""


def test_installed_window_lists_every_builtin_preset(installed):
    env = _user_env(installed)
    done = _run([str(installed["python"]), "-c", WINDOW_CHECK], installed["cwd"], env, 300)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(seen["package"]).is_relative_to(installed["venv"])
    assert seen["banner"] == ""
    assert seen["presets"] == [p.name for p in builtin_presets()]
    assert seen["icon"] is True
    # F1's manual comes from the wheel's metadata (no README.md file is installed).
    assert seen["help_headings"][:2] == ["Keyboard shortcuts", "Autocast Explorer"]
    assert {"Install as a user", "The window"} <= set(seen["help_headings"])
    assert seen["help_at_section"] is True


#: A tester's project elsewhere: no conftest, no pytest_plugins line; the wheel's pytest11 entry
#: point alone brings the `explorer` fixture.
PLUGIN_TEST = """
from pathlib import Path

import autocast_explorer.testing as kit
from autocast_explorer.testing import run_and_wait


def test_the_installed_kit_runs_an_experiment(explorer, tiny_config):
    assert Path(kit.__file__).is_relative_to(Path({venv!r}))
    result = run_and_wait(explorer, tiny_config)
    assert result.config == tiny_config
    assert explorer.latencyPlot.drawn()["heights"] == [
        result.plain.median_ms, result.autocast.median_ms
    ]
"""


def test_installed_wheel_brings_the_pytest_plugin(installed):
    env = _user_env(installed)
    project = installed["home"] / "tester-project"
    project.mkdir(exist_ok=True)
    (project / "test_kit.py").write_text(PLUGIN_TEST.format(venv=str(installed["venv"])))
    done = _run(
        [str(installed["python"]), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_kit.py"],
        project,
        env,
        300,
    )
    assert "1 passed" in done.stdout.splitlines()[-1]
