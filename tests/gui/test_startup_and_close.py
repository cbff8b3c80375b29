"""Start-up without torch on the GUI path, and closing mid-run, each in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

#: Each test starts a fresh Python with Qt (and most with torch): seconds apiece.
pytestmark = pytest.mark.slow

SUBPROCESS_TIMEOUT_S = 180
QT_ABORTS = ("QThread: Destroyed while thread is still running", "Aborted", "core dumped")


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
    )


def test_importing_the_gui_and_building_the_window_does_not_load_torch():
    out = run_python(
        """
        import sys
        import autocast_explorer.gui
        from autocast_explorer.gui import MainWindow
        import autocast_explorer.gui.window.app, autocast_explorer.gui.window.main_window
        print("after import:", "torch" in sys.modules)
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        w = MainWindow()
        app.processEvents()
        print("after build:", "torch" in sys.modules, w.runner.is_running(),
              w.runButton.isEnabled(), w.engine_ready())
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "after import: False",
        "after build: False False False False",
    ]


def test_the_window_paints_loading_first_then_enables_run():
    out = run_python(
        """
        import sys
        from PySide6.QtCore import QObject, Slot
        from autocast_explorer.gui.window.app import create_application
        from autocast_explorer.gui import MainWindow

        app = create_application(sys.argv)
        w = MainWindow()

        class Probe(QObject):
            @Slot()
            def painted(self):
                print("painted:", "torch" in sys.modules, w.runButton.isEnabled(),
                      w.verdictLabel.text(), flush=True)

            @Slot()
            def ready(self):
                print("ready:", "torch" in sys.modules, w.runButton.isEnabled(), flush=True)
                w.close()

        probe = Probe()
        w.firstPainted.connect(probe.painted)
        w.engineReady.connect(probe.ready)
        w.show()
        sys.exit(app.exec())
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "painted: False False Loading PyTorch…",
        "ready: True True",
    ]


def test_the_progressive_window_paints_before_it_builds_the_rest_and_ends_the_same():
    # The app's window (run_app) paints with the controls, Overview and Layers, then imports
    # and builds the other tabs; once built it has what MainWindow() has, menus included.
    out = run_python(
        """
        import sys
        from PySide6.QtCore import QObject, Slot
        from autocast_explorer.gui.window.app import create_application
        from autocast_explorer.gui import MainWindow

        app = create_application(sys.argv)

        def shape(w):
            tabs = [w.resultTabs.tabText(i) for i in range(w.resultTabs.count())]
            menus = {a.text(): [x.text() for x in a.menu().actions()]
                     for a in w.menuBar().actions()}
            return tabs, menus

        # A config saved by the last session: restoring it must not load torch either.
        import json
        from autocast_explorer.core.experiment.config import ExperimentConfig
        from autocast_explorer.gui.window.settings import CONFIG_KEY, open_settings

        store = open_settings()
        store.setValue(CONFIG_KEY, json.dumps(ExperimentConfig(batch=64).to_dict()))
        store.sync()
        w = MainWindow(progressive=True)
        print("built:", w.features_installed, w.resultTabs.count(), w.batchSpin.value(), flush=True)

        class Probe(QObject):
            @Slot()
            def painted(self):
                print("painted:", w.resultTabs.count(), w.presets.shown_text(),
                      "pydantic" in sys.modules, "torch" in sys.modules, flush=True)

            @Slot()
            def installed(self):
                eager = MainWindow(autoload=False)  # built at once, after w's first paint
                print("installed:", shape(w) == shape(eager), w.presets.shown_text(),
                      len(w.presets.presets()) > 3, flush=True)

            @Slot()
            def ready(self):
                print("ready:", w.runButton.isEnabled(), flush=True)
                w.close()

        probe = Probe()
        w.firstPainted.connect(probe.painted)
        w.featuresInstalled.connect(probe.installed)
        w.engineReady.connect(probe.ready)
        w.show()
        sys.exit(app.exec())
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "built: False 2 64",
        "painted: 2 Loading presets… False False",
        "installed: True Custom settings True",
        "ready: True",
    ]


def test_closing_during_a_run_cancels_waits_and_exits_0():
    # Drives the real entry point (run_app) with a window that starts a long run and is
    # closed once the timing loop is under way.
    out = run_python(
        """
        import sys
        from PySide6.QtCore import Slot
        import autocast_explorer.gui.window.closing as closing
        import autocast_explorer.gui.window.main_window as mw
        from autocast_explorer.core.experiment.config import ExperimentConfig

        # Block on the close until the run stops (at most the grace period), however loaded
        # the machine: the window staying open meanwhile is test_closing_stuck_work.py's.
        closing.QUICK_STOP_S = closing.CLOSE_GRACE_S

        class Driven(mw.MainWindow):
            def __init__(self, **options):
                super().__init__(**options)
                self.engineReady.connect(self.go)
                self.runner.progress.connect(self.maybe_close)
                self.experimentFinished.connect(self.finished_)
                self.experimentForecast.connect(lambda _forecast: self.run_anyway())

            @Slot()
            def go(self):
                self.set_config(ExperimentConfig(widths=(64, 64, 10), batch=16, min_time=120.0))
                print("started", self.start_experiment(), flush=True)

            @Slot(float, str)
            def maybe_close(self, fraction, message):
                if message.startswith("timing") and self.isVisible():
                    print("closing during:", message, flush=True)
                    self.close()
                    print("closed; threads left:", self.runner.live_threads(),
                          "running:", self.runner.is_running(), flush=True)

            @Slot(object)
            def finished_(self, result):
                print("finished", flush=True)

        mw.MainWindow = Driven
        from autocast_explorer.gui.window.app import run_app
        code = run_app(["autocast-explorer"])
        print("exit", code, flush=True)
        sys.exit(code)
        """
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "started True"
    assert lines[1].startswith("closing during: timing float32 vs bfloat16")
    assert lines[2] == "closed; threads left: 0 running: False"
    assert lines[-1] == "exit 0"
    assert "finished" not in lines
    assert "could not stop" not in out.stderr
    for abort in QT_ABORTS:
        assert abort not in out.stderr
