"""The app's (progressive) window builds its later tabs once the engine loader has ended, and
does so when loading failed too: the tabs never wait on a loader that will not come."""

from __future__ import annotations

from autocast_explorer.gui import MainWindow
from autocast_explorer.gui.window import experiment_run

FEATURES_TIMEOUT_MS = 60_000


def test_a_failed_engine_load_still_builds_the_later_tabs(qtbot, monkeypatch):
    def broken(_state):
        raise ImportError("libtorch_cpu.so: cannot open shared object file")

    monkeypatch.setattr(experiment_run, "load_engine_task", broken)
    win = MainWindow(progressive=True)
    qtbot.addWidget(win)
    assert not win.features_installed
    with qtbot.waitSignal(win.featuresInstalled, timeout=FEATURES_TIMEOUT_MS):
        win.show()
    assert not win.engine_ready() and not win.runButton.isEnabled()
    assert win.messageBanner.text().startswith("PyTorch could not be loaded")
    assert "libtorch_cpu.so" in win.messageBanner.text()
    eager = MainWindow(autoload=False)
    qtbot.addWidget(eager)
    tabs = [win.resultTabs.tabText(i) for i in range(win.resultTabs.count())]
    assert tabs == [eager.resultTabs.tabText(i) for i in range(eager.resultTabs.count())]


def test_a_failing_job_before_the_engines_imports_still_lets_the_engine_load(qtbot, monkeypatch):
    # The loader waits for the window's go-ahead once torch is in; the window gives it even
    # when its own work in between (the preset list) raised.
    win = MainWindow(progressive=True)
    qtbot.addWidget(win)

    def broken() -> None:
        raise RuntimeError("preset folder unreadable")

    monkeypatch.setattr(win, "_run_deferred_jobs", broken)
    installed = qtbot.waitSignal(win.featuresInstalled, timeout=FEATURES_TIMEOUT_MS)
    with qtbot.capture_exceptions() as raised, installed:
        win.show()
    assert win.engine_ready() and win.environment is not None
    assert [str(error) for _kind, error, _trace in raised] == ["preset folder unreadable"]
