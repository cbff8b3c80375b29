"""Start-up without torch on the GUI path, and closing mid-run, each in a fresh process."""

from __future__ import annotations

import json
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
            def torch_in(self):
                listed = self.presets.shown_text() != "Loading presets…"
                events.append(f"torch: Run {self.runButton.isEnabled()}, presets listed {listed}")

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
    # The app's window (run_app) paints with the controls, Overview and Layers, loads the
    # engine, then imports and builds the other tabs; once built it has what MainWindow() has,
    # menus included, and the tabs built after the engine show what it found.
    out = run_python(
        """
        import sys
        from PySide6.QtCore import QObject, Slot
        from autocast_explorer.gui.window.app import create_application
        from autocast_explorer.gui import MainWindow

        app = create_application(sys.argv)
        WAITING = "Waiting for PyTorch to load…"  # the hardware tab until the engine is ready

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
                print("hardware:", w.sweeps.hardware.verdictHeadline.text() == WAITING,
                      w.sweeps.hardware.probeButton.isEnabled(), flush=True)
                w.close()

            @Slot()
            def torch_in(self):
                listed = self.presets.shown_text() != "Loading presets…"
                events.append(f"torch: Run {self.runButton.isEnabled()}, presets listed {listed}")

            @Slot()
            def ready(self):
                print("ready:", w.runButton.isEnabled(), w.features_installed, flush=True)

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
        "ready: True False",
        "installed: True Custom settings True",
        "hardware: False True",
    ]


def test_the_app_window_loads_the_engine_before_it_builds_the_later_tabs():
    # Recorded events, not times: through the real entry point, the loader starts right after
    # the first paint (torch not yet imported, the later tabs not built); once torch is in,
    # Run is enabled, then the preset list is read and the shared packages imported on the
    # GUI thread before the loader imports the engine, and the later tabs are built last.
    out = run_python(
        """
        import sys, threading
        from PySide6.QtCore import Slot
        import autocast_explorer.gui.window.experiment_run as run
        import autocast_explorer.gui.window.main_window as mw

        events = []
        GUI = threading.main_thread()

        def where():
            return "gui" if threading.current_thread() is GUI else "worker"

        def shared(original=run.import_shared_packages):
            original()
            events.append(f"shared imported on {where()}: pydantic {'pydantic' in sys.modules}")

        def loader(state, original=run.load_engine_task):
            events.append(f"loader started on {where()}: torch {'torch' in sys.modules}")
            return original(state)

        def later(original=mw.later_features):
            events.append(f"later tabs built on {where()}")
            return original()

        run.import_shared_packages, run.load_engine_task = shared, loader
        mw.later_features = later

        class Recorded(mw.MainWindow):
            def __init__(self, **options):
                super().__init__(**options)
                self.firstPainted.connect(self.painted)
                self.torchLoaded.connect(self.torch_in)
                self.engineReady.connect(self.ready)
                self.featuresInstalled.connect(self.installed)

            @Slot()
            def painted(self):
                events.append(f"painted: torch {'torch' in sys.modules}")

            @Slot()
            def torch_in(self):
                listed = self.presets.shown_text() != "Loading presets…"
                events.append(f"torch: Run {self.runButton.isEnabled()}, presets listed {listed}")

            @Slot()
            def ready(self):
                listed = self.presets.shown_text() != "Loading presets…"
                later, run = self.features_installed, self.runButton.isEnabled()
                events.append(f"ready: presets listed {listed}, later tabs {later}, Run {run}")

            @Slot()
            def installed(self):
                events.append(f"installed: Run {self.runButton.isEnabled()}")
                self.close()

        mw.MainWindow = Recorded
        from autocast_explorer.gui.window.app import run_app
        code = run_app(["autocast-explorer"])
        print("\\n".join(events))
        sys.exit(code)
        """
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == [
        "painted: torch False",
        "loader started on worker: torch False",
        "torch: Run True, presets listed False",
        "shared imported on gui: pydantic True",
        "ready: presets listed True, later tabs False, Run True",
        "later tabs built on gui",
        "installed: Run True",
    ]


def test_no_package_but_ours_is_imported_by_both_the_gui_thread_and_the_loader():
    # Two threads importing the same package at once can see it half initialised. The GUI
    # thread's imports after the first paint (every later tab, the preset list) and the
    # loader's imports after the shared packages may share only the standard library and our
    # own modules (which the loader imports while the GUI thread builds nothing).
    prelude = """
        import json, sys
        from autocast_explorer.gui.window.app import create_application
        from autocast_explorer.gui import MainWindow
        from autocast_explorer.gui.window import engine_loading

        app = create_application(sys.argv)
        MainWindow(progressive=True, autoload=False)  # what the first paint needs
        before = set(sys.modules)
        """
    gui = run_python(
        prelude
        + """
        MainWindow(autoload=False)  # everything else, built at once
        print(json.dumps(sorted(set(sys.modules) - before)))
        """
    )
    loader = run_python(
        prelude
        + """
        class State:
            def set_progress(self, fraction, message=""):
                pass

            def ask(self, question):  # the window's go-ahead once torch is in
                return True

            def check(self):
                pass

        engine_loading.import_shared_packages()
        shared = set(sys.modules)
        engine_loading.load_engine_task(State())
        print(json.dumps([sorted(shared - before), sorted(set(sys.modules) - shared)]))
        """
    )
    assert gui.returncode == 0, gui.stderr
    assert loader.returncode == 0, loader.stderr
    gui_modules = set(json.loads(gui.stdout))
    shared, engine = map(set, json.loads(loader.stdout))
    assert {"pydantic", "pydantic_core"} <= shared and "torch" not in shared
    assert "torch" in engine

    def packages(modules: set[str]) -> set[str]:
        tops = {name.split(".")[0] for name in modules}
        return {t for t in tops if t not in sys.stdlib_module_names and t != "autocast_explorer"}

    assert packages(gui_modules & engine) == set()
    assert packages(gui_modules & shared) >= {"pydantic", "pydantic_core"}


def test_a_run_pressed_as_soon_as_torch_is_in_waits_for_the_engine_and_finishes():
    # Run is enabled once torch is imported, before the loader has imported the engine: a run
    # started at that moment waits on its worker for the engine's imports, then measures.
    out = run_python(
        """
        import sys
        from PySide6.QtCore import Slot
        import autocast_explorer.gui.window.main_window as mw
        from autocast_explorer.core.experiment.config import ExperimentConfig

        class Eager(mw.MainWindow):
            def __init__(self, **options):
                super().__init__(**options)
                self.torchLoaded.connect(self.go)
                self.experimentFinished.connect(self.done)
                self.experimentFailed.connect(lambda text: (print("failed", text), self.close()))

            @Slot()
            def go(self):
                self.set_config(ExperimentConfig(widths=(8, 4), batch=2, min_time=0.01))
                engine = "autocast_explorer.core.experiment.engine" in sys.modules
                print("engine imported:", engine, "ready:", self.engine_ready(), flush=True)
                print("started:", self.start_experiment(), flush=True)

            @Slot(object)
            def done(self, result):
                print("finished:", result.config.widths, result.output_dtype.autocast, flush=True)
                self.close()

        mw.MainWindow = Eager
        from autocast_explorer.gui.window.app import run_app
        sys.exit(run_app(["autocast-explorer"]))
        """
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == [
        "engine imported: False ready: False",
        "started: True",
        "finished: (8, 4) bfloat16",
    ]


def test_a_run_waits_while_a_loader_imports_the_engine():
    import threading

    from autocast_explorer.gui.window import engine_loading

    inside, release, waited = threading.Event(), threading.Event(), threading.Event()
    said: list[str] = []

    def loader():
        with engine_loading.importing_engine():
            inside.set()
            release.wait(SUBPROCESS_TIMEOUT_S)

    def run():
        engine_loading.wait_for_engine_imports(
            lambda: False, poll_s=0.01, waiting=lambda: said.append("waiting")
        )
        waited.set()

    threads = [threading.Thread(target=loader), threading.Thread(target=run)]
    threads[0].start()
    assert inside.wait(SUBPROCESS_TIMEOUT_S)
    threads[1].start()
    assert not waited.wait(0.2)  # still importing: the run waits
    release.set()
    assert waited.wait(SUBPROCESS_TIMEOUT_S)
    for thread in threads:
        thread.join()
    # None loading: returns at once, and says nothing (a run's progress is not "loading").
    engine_loading.wait_for_engine_imports(lambda: False, waiting=lambda: said.append("again"))
    assert said == ["waiting"]


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
