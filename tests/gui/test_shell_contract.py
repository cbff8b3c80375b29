"""The shell's promises: presets reach the Sweeps tab, lessons reach views by id, tasks always
end with an outcome, closing is bounded, and every file action runs without its dialog."""

from __future__ import annotations

import json
import threading

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox

from autocast_explorer.core.learning.presets import builtin_presets, user_presets_dir
from autocast_explorer.gui.tasks.runner import TaskRunner
from tests.edits import edited
from tests.gui.helpers import RUN_TIMEOUT_MS, run_to_end


def test_a_sweep_preset_fills_the_sweeps_tab(window):
    tab = window.sweeps.sweeps
    for preset in (p for p in builtin_presets() if p.sweep is not None):
        window.presets.choose(preset.id)
        sweep = preset.sweep
        assert tab.param() == ("grid" if sweep.is_grid else sweep.param), preset.id
        assert tab.spec() == sweep, preset.id
        assert tab.valuesEdit.text() == ",".join(map(str, sweep.values))
    combo = window.findChild(QComboBox, "sweepParamCombo")
    assert combo.currentData() == tab.param()


def test_lessons_reach_the_op_trace_by_id_whatever_its_title(window):
    tabs = window.resultTabs
    tabs.setTabText(tabs.indexOf(window.opTraceView), "Dispatch")
    assert window.lessonsPanel.show_chart("ops") == "ops"
    assert tabs.currentWidget() is window.opTraceView
    assert window.lessonsPanel.highlighted_chart() == window.opTraceView.objectName()


def test_a_task_raising_system_exit_fails_and_leaves_run_enabled(window, qtbot):
    for error in (SystemExit(3), KeyboardInterrupt()):

        def leave(_state, error=error):
            raise error

        with qtbot.waitSignal(window.runner.failed, timeout=RUN_TIMEOUT_MS) as blocker:
            assert window.runner.start(leave)
        assert blocker.args[0].startswith(type(error).__name__)
        assert isinstance(window.runner.last_error, type(error))
        assert window.runButton.isEnabled()
        assert not window.runner.is_running()
    # The window still runs experiments afterwards.
    assert run_to_end(qtbot, window).plain.median_ms > 0


def test_another_features_failure_leaves_the_verdict_of_the_result_on_screen(window, qtbot):
    result = run_to_end(qtbot, window)
    verdict = window.verdictLabel.text()
    assert verdict and not verdict.startswith("Run failed")

    def broken(_state):
        raise RuntimeError("the probe broke")

    client = window.task_router.client("a-feature")
    with qtbot.waitSignal(client.failed, timeout=RUN_TIMEOUT_MS) as blocker:
        assert client.start(broken)
    assert blocker.args[0] == "RuntimeError: the probe broke"
    assert window.verdictLabel.text() == verdict  # still the shown result's verdict
    assert window.messageBanner.text() == "Failed: RuntimeError: the probe broke"
    assert window.last_result is result and window.runButton.isEnabled()


def test_shutdown_waits_with_a_limit_and_names_what_it_left(qtbot):
    runner = TaskRunner(name="stuck")
    release = threading.Event()
    entered = threading.Event()

    def stuck(_state):  # one long op that never checks for cancellation
        entered.set()
        release.wait(60)
        return "done"

    assert runner.start(stuck)
    qtbot.waitUntil(entered.is_set, timeout=10_000)
    left = runner.shutdown(timeout_s=0.05)
    assert left == ["stuck-1"]
    assert runner.live_threads() == 1  # still referenced: never destroyed while running
    release.set()
    qtbot.waitUntil(lambda: runner.live_threads() == 0, timeout=10_000)
    assert runner.shutdown(timeout_s=0.05) == []


def test_closing_during_a_run_finishes(window, qtbot):
    assert window.start_experiment()
    window.close()
    assert not window.runner.is_running()
    assert window.runner.live_threads() == 0


def test_file_methods_do_what_the_menus_do_without_dialogs(window, qtbot, tmp_path):
    compare = window.compare_window  # reachable before File › Compare runs… was used
    assert compare.objectName() == "compareWindow"
    assert not compare.isVisible()
    assert not window.save_result(tmp_path / "none.json")  # nothing shown yet
    result = run_to_end(qtbot, window)
    saved = tmp_path / "result.json"
    assert window.save_result(saved)
    assert window.save_result(tmp_path / "latency.csv")
    assert (tmp_path / "latency.csv").read_text() == result.to_csv()
    window.clear_results()
    assert window.open_result(saved)
    assert window.last_result.to_dict() == result.to_dict()
    assert not window.open_result(tmp_path / "missing.json")
    assert "missing.json" in window.messageBanner.text()

    assert window.compare_files([saved]) == []
    assert window.compare_window is compare and compare.isVisible()
    # This window's run, once: the file holds the same run (it was listed twice).
    assert len(compare.labels()) == 1
    other = tmp_path / "other.json"
    other.write_text(edited(result, config=result.config.replace(batch=3)).to_json())
    assert window.compare_files([other]) == []
    assert len(compare.labels()) == 2  # this window's run and the other file

    markdown = window.export_report(tmp_path / "report")
    assert markdown == tmp_path / "report" / "report.md"
    assert "latency.png" in markdown.read_text()

    path = window.save_preset("mine", "A tiny model.")
    assert path == user_presets_dir() / "mine.json" and path.exists()
    assert window.presets.chosen().name == "mine"
    # Saving again never opens a modal dialog: the file is kept unless replace=True.
    before = path.read_text()
    window.set_config(window.current_config().replace(batch=3))
    assert window.save_preset("mine", "Batch 3 now.") is None
    assert path.read_text() == before
    assert "exists already" in window.presets.message.text()
    assert window.save_preset("mine", "Batch 3 now.", replace=True) == path
    assert json.loads(path.read_text())["config"]["batch"] == 3

    assert not window.save_sweep(tmp_path / "sweep.json")  # no sweep measured yet
    tab = window.sweeps.sweeps
    tab.set_sweep("batch", "1,2")
    with qtbot.waitSignal(tab.sweepFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(tab.runSweepButton, Qt.MouseButton.LeftButton)
    assert window.save_sweep(tmp_path / "sweep.json")
    assert (tmp_path / "sweep.json").read_text() == blocker.args[0].to_json()
    assert window.save_sweep(tmp_path / "sweep.csv")
    assert (tmp_path / "sweep.csv").read_text() == blocker.args[0].to_csv()


def test_every_action_has_its_own_object_name(window):
    names = [a.objectName() for a in window.findChildren(QAction) if a.objectName()]
    named = [n for n in names if not n.startswith(("qt_", "_q_"))]
    assert len(named) == len(set(named)), sorted(n for n in named if named.count(n) > 1)
    assert window.probeAction.objectName() == "probeAction"
    assert window.onednnAction.objectName() != "probeAction"
