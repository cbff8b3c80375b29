"""Closing the app while its work cannot stop: never an abort, settings saved, one line.

Each test drives the real entry point (run_app) in a fresh Python with a user model that never
returns, in its forward or at import, and closes the window once that code is running. The
grace period is set short (or long, where a second close or Ctrl-C must end it first), so no
test waits on the real ten seconds.
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.process, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SUBPROCESS_TIMEOUT_S = 180
QT_ABORTS = ("QThread: Destroyed while thread is still running", "Aborted", "core dumped")

FOREVER_IN_FORWARD = """\
import __main__
import torch


class Forever(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        __main__.ENTERED.set()
        while True:
            pass


def build():
    return Forever(), torch.randn(1, 4)
"""
FOREVER_AT_IMPORT = """\
import __main__

__main__.ENTERED.set()
while True:
    pass
"""

#: The app, a window that runs `spec` and, once the user's code is running, does `then`:
#: "close" (once), "close twice" or "ctrl-c twice" (SIGINT to itself).
DRIVER = """
import os, signal, sys, threading
from PySide6.QtCore import QTimer, Slot
import autocast_explorer.gui.window.closing as closing
import autocast_explorer.gui.window.main_window as mw
from autocast_explorer.core.experiment.config import ExperimentConfig

closing.CLOSE_GRACE_S, closing.QUICK_STOP_S = {grace}, 0.2
ENTERED = threading.Event()  # set by the user's code


class Driven(mw.MainWindow):
    def __init__(self, **options):
        super().__init__(**options)
        self.confirm_model_file = lambda _path: True
        self.engineReady.connect(self.go)
        self.watch = QTimer(self, interval=20)
        self.watch.timeout.connect(self.when_entered)

    @Slot()
    def go(self):
        self.set_config(ExperimentConfig(model={spec!r}, batch=2, min_time=0.02))
        print("started", self.start_experiment(), flush=True)
        self.watch.start()

    @Slot()
    def when_entered(self):
        if not ENTERED.is_set():
            return
        self.watch.stop()
        if {then!r} == "ctrl-c twice":
            os.kill(os.getpid(), signal.SIGINT)  # closes; the second once the window waits
            self.watch.timeout.disconnect(self.when_entered)
            self.watch.timeout.connect(self.when_waiting)
            self.watch.start()
            return
        print("close returned", self.close(), "visible", self.isVisible(), flush=True)
        if {then!r} == "close twice":
            QTimer.singleShot(0, self.close)


    @Slot()
    def when_waiting(self):
        if self.messageBanner.text().startswith("Closing: waiting"):
            self.watch.stop()
            os.kill(os.getpid(), signal.SIGINT)


mw.MainWindow = Driven
from autocast_explorer.gui.window.app import run_app
code = run_app(["autocast-explorer"])
print("run_app returned", code, flush=True)  # never: the process ends in the closing
sys.exit(code)
"""


def run_app_with(tmp_path: Path, model: str, then: str, grace: float):
    (tmp_path / "forever.py").write_text(model)
    spec = f"{tmp_path / 'forever.py'}:build"
    script = DRIVER.format(grace=grace, spec=spec, then=then)
    settings = tmp_path / "settings.ini"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "AUTOCAST_EXPLORER_SETTINGS": str(settings),
    }
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    for abort in QT_ABORTS:
        assert abort not in out.stderr
    return out, spec, settings


def saved_config(settings: Path) -> dict:
    store = configparser.ConfigParser(interpolation=None)
    store.read(settings)
    return json.loads(json.loads(store["experiment"]["config"]))


def test_closing_while_the_forward_never_returns_ends_after_the_grace_period(tmp_path):
    out, spec, settings = run_app_with(tmp_path, FOREVER_IN_FORWARD, "close", grace=1.0)
    assert out.returncode == 0, out.stdout + out.stderr
    # The first close waits with the window open (closing again would quit at once).
    assert out.stdout.splitlines() == ["started True", "close returned False visible True"]
    assert out.stderr.splitlines() == [
        "closed while experiment-1 could not stop: its work was abandoned; settings saved"
    ]
    assert saved_config(settings)["model"] == spec


def test_closing_again_ends_at_once_even_with_a_long_grace_period(tmp_path):
    # The module itself never finishes importing. With 600 s of grace, only the second
    # close can have ended the process within the subprocess timeout.
    out, spec, settings = run_app_with(tmp_path, FOREVER_AT_IMPORT, "close twice", grace=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == ["started True", "close returned False visible True"]
    assert out.stderr.splitlines() == [
        "closed while experiment-1 could not stop: its work was abandoned; settings saved"
    ]
    assert saved_config(settings)["model"] == spec


def test_a_second_ctrl_c_ends_at_once_with_exit_130(tmp_path):
    out, spec, settings = run_app_with(tmp_path, FOREVER_IN_FORWARD, "ctrl-c twice", grace=600)
    assert out.returncode == 130, out.stdout + out.stderr
    assert out.stdout.splitlines() == ["started True"]
    assert out.stderr.splitlines() == [
        "interrupted while experiment-1 could not stop: its work was abandoned; settings saved"
    ]
    assert saved_config(settings)["model"] == spec
