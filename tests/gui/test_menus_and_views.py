"""Menus (save, export, open), the result-view extension point and the layer editor."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QLabel, QWidget

from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.gui.features.experiment.layer_editor import LayerEditorDialog
from tests.gui.helpers import run_to_end


def menu_action(window, menu: str, text: str):
    """The action as a person finds it: by its text in a menu of the menu bar."""
    for action in window.menu(menu).actions():
        if action.text().replace("&", "") == text:
            return action
        if action.menu() is not None:
            for sub in action.menu().actions():
                if sub.text().replace("&", "") == text:
                    return sub
    raise AssertionError(f"no {text!r} in the {menu} menu")


@pytest.fixture
def save_to(monkeypatch):
    """Answer the next save dialog with a path (and the filter a person would have picked)."""

    def answer(path, chosen: str = "") -> None:
        monkeypatch.setattr(
            QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), chosen))
        )

    return answer


def test_save_json_from_the_menu_round_trips(window, qtbot, tmp_path, save_to):
    action = menu_action(window, "File", "Save result As…")
    assert not action.isEnabled()  # nothing to save yet
    result = run_to_end(qtbot, window)
    assert action.isEnabled()
    target = tmp_path / "result.json"
    save_to(target, "JSON (*.json)")
    action.trigger()
    loaded = ExperimentResult.from_json(target.read_text(encoding="utf-8"))
    assert loaded.to_dict() == result.to_dict()
    assert loaded.plain.median_ms == result.plain.median_ms
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]  # no temp file left


def test_save_latency_csv(window, qtbot, tmp_path, save_to):
    result = run_to_end(qtbot, window)
    target = tmp_path / "latency.csv"
    save_to(target)
    menu_action(window, "File", "Export latency CSV…").trigger()
    assert target.read_text(encoding="utf-8") == result.to_csv()


def test_export_charts_as_png_and_svg(window, qtbot, tmp_path, save_to):
    run_to_end(qtbot, window)
    qtbot.wait(200)  # as after a person's click: axes have re-laid out for the new ticks
    png = tmp_path / "latency.png"
    save_to(png)
    menu_action(window, "File", "Latency chart…").trigger()
    image = QImage(str(png))
    assert not image.isNull()
    assert image.width() >= window.latencyPlot.width()  # rendered at least at screen size
    svg = tmp_path / "dtypes"
    save_to(svg, "SVG image (*.svg)")  # no suffix typed: the chosen filter decides
    menu_action(window, "File", "Dtype per layer chart…").trigger()
    text = (tmp_path / "dtypes.svg").read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "fc1" in text and "autocast (bfloat16)" in text


def test_a_failed_save_is_shown_not_raised(window, qtbot, tmp_path, save_to):
    run_to_end(qtbot, window)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    save_to(blocker / "result.json")
    menu_action(window, "File", "Save result As…").trigger()
    assert window.messageBanner.isVisible()
    assert "Could not save the result" in window.messageBanner.text()


def test_open_result_shows_it_in_every_view(window, qtbot, tmp_path, monkeypatch):
    result = run_to_end(qtbot, window)
    saved = result.to_dict()
    saved["agreement"]["histogram"]["counts"][0] += 5  # a different result than on screen
    path = tmp_path / "other.json"
    path.write_text(ExperimentResult.from_dict(saved).to_json(), encoding="utf-8")
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), ""))
    )
    with qtbot.assertNotEmitted(window.experimentFinished):
        menu_action(window, "File", "Open result JSON…").trigger()
    assert window.agreementPlot.drawn()["counts"][0] == result.agreement.histogram.counts[0] + 5
    assert window.last_result.to_dict() == saved


class RecordingView(QLabel):
    """A minimal result view, as another engineer would write one."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[ExperimentResult] = []
        self.cleared = 0

    def show_result(self, result: ExperimentResult) -> None:
        self.shown.append(result)
        self.setText(f"speedup {result.speedup:.3f}")

    def clear(self) -> None:
        self.cleared += 1
        self.setText("")


def test_add_view_gets_every_finished_run(window, qtbot):
    view = RecordingView()
    window.add_view(view, "Mine")
    index = window.resultTabs.indexOf(view)
    assert window.resultTabs.tabText(index) == "Mine"
    assert index == window.resultTabs.count() - 1
    first = run_to_end(qtbot, window)
    second = run_to_end(qtbot, window)
    assert view.shown == [first, second]
    assert view.text() == f"speedup {second.speedup:.3f}"
    window.clear_results()
    assert view.cleared == 1
    assert window.latencyPlot.drawn()["heights"] == []
    assert window.dtypePlot.cells() == []
    late = RecordingView()
    window.add_view(late, "Late")
    assert late.shown == []  # nothing to show after clear_results
    with pytest.raises(TypeError):
        window.add_view(QWidget(), "not a view")


def test_a_view_added_after_a_run_shows_the_last_result(window, qtbot):
    result = run_to_end(qtbot, window)
    view = RecordingView()
    window.add_view(view, "Late")
    assert view.shown == [result]


def test_menu_helper_creates_menus_before_help(window):
    tools = window.menu("&Tools")
    assert window.menu("Tools") is tools
    assert window.menu("File") is window.menu("&File")
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles[0] == "File"
    assert titles[-2:] == ["Tools", "Help"]  # new menus go last, just before Help


def test_layer_editor_adds_and_removes_hidden_layers(qtbot):
    dialog = LayerEditorDialog((256, 128, 10))
    qtbot.addWidget(dialog)
    dialog.table.selectRow(1)
    dialog.addButton.click()
    assert dialog.widths() == (256, 128, 128, 10)
    dialog.table.selectRow(0)  # the input row is never removed; the last hidden one goes
    dialog.removeButton.click()
    dialog.removeButton.click()
    assert dialog.widths() == (256, 10)
    assert not dialog.removeButton.isEnabled()


def test_layers_button_writes_the_widths_field(window, qtbot, monkeypatch):
    def accept_with_one_more(self) -> int:
        self.addButton.click()
        return 1

    monkeypatch.setattr(LayerEditorDialog, "exec", accept_with_one_more)
    window.widthsEdit.setText("32,16,4")
    window.controls.layersButton.click()
    assert window.widthsEdit.text() == "32,16,16,4"
    assert window.current_config().widths == (32, 16, 16, 4)


def test_svg_closed_paths_become_explicit_lines():
    from autocast_explorer.gui.charts.export import close_paths_explicitly

    assert close_paths_explicitly("M0,0 L1,0 L1,1 Z M2,2 L3,2 Z ") == (
        "M0,0 L1,0 L1,1 L0,0 M2,2 L3,2 L2,2"
    )
    assert close_paths_explicitly("M1.5,2 L3,4") == "M1.5,2 L3,4"


def test_other_panels_share_the_runner_without_triggering_experiment_signals(window, qtbot):
    import threading

    release = threading.Event()

    def sweep_like(state):
        state.set_progress(0.5, "sweep point 1 of 2")
        state.set_partial({"point": 1})
        release.wait(10)
        return ["not", "an", "ExperimentResult"]

    with (
        qtbot.assertNotEmitted(window.experimentStarted),
        qtbot.assertNotEmitted(window.experimentFinished),
    ):
        assert window.runner.start(sweep_like)
        qtbot.waitUntil(lambda: window.progressBar.value() == 500, timeout=10_000)
        assert not window.runButton.isEnabled()  # one run at a time, whoever started it
        assert window.cancelButton.isEnabled()
        assert window.start_experiment() is False
        with qtbot.waitSignal(window.runner.finished, timeout=10_000) as blocker:
            release.set()
    assert blocker.args == [["not", "an", "ExperimentResult"]]
    assert window.last_result is None
    assert window.runButton.isEnabled()
    run_to_end(qtbot, window)  # and the window's own runs still work
