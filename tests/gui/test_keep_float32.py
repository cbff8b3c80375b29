"""The Layers tab's keep set: the "Keep in float32" column and the patterns field, both bound to
the experiment state, drive the next Run; a pattern that names no layer is refused as a run's
model errors are."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel, QLineEdit

from autocast_explorer.gui.features.experiment.keep_column import HEADER, KeepFloat32Column
from autocast_explorer.gui.features.experiment.layer_table import COLUMNS
from tests.gui.helpers import TINY, run_to_end

NAMES = ["fc1", "relu1", "fc2"]


def column(window) -> KeepFloat32Column:
    found = window.findChild(QObject, "keepFloat32Column")
    assert isinstance(found, KeepFloat32Column)
    return found


def click(qtbot, window, row: int) -> None:
    """A real click in the middle of the row's check cell."""
    table = window.layerTable
    index = table.model().index(row, column(window).column)
    table.scrollTo(index)
    rect = table.visualRect(index)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_a_checked_row_is_kept_by_the_next_run(window, qtbot):
    window.resize(1400, 800)
    window.show()
    window.resultTabs.setCurrentWidget(window.layerTable)
    first = run_to_end(qtbot, window)
    assert [layer.name for layer in first.layers] == NAMES
    assert window.layerTable.kept_rows() == [False, False, False]
    assert first.config.keep_float32 == () and "keep_float32" not in first.to_dict()["config"]

    click(qtbot, window, 2)  # fc2
    assert window.experiment_state.config.keep_float32 == ("fc2",)
    assert window.findChild(QLineEdit, "keepFloat32Edit").text() == "fc2"
    assert window.layerTable.kept_rows() == [False, False, True]

    kept = run_to_end(qtbot, window)
    assert kept.config.keep_float32 == ("fc2",)
    by_name = {layer.name: layer for layer in kept.layers}
    fc2, fc1 = by_name["fc2"], by_name["fc1"]
    assert (fc2.kept_float32, fc1.kept_float32) == (True, False)
    assert (fc2.autocast.out_dtype, fc1.autocast.out_dtype) == ("float32", "bfloat16")
    assert set(fc2.autocast.compute.dtypes) == {"float32"}
    assert set(fc1.autocast.compute.dtypes) == {"bfloat16"}
    rows = window.layerTable.rows()
    assert rows[2][4] == "bfloat16 → float32 (kept in float32)"
    assert rows[0][4] == "float32 → bfloat16" and rows[2][COLUMNS.index(HEADER)] == ""
    assert window.layerTable.kept_rows() == [False, False, True]  # the state's, after the run


def test_space_toggles_the_current_rows_check_and_unchecking_lets_it_go(window, qtbot):
    run_to_end(qtbot, window)
    table = window.layerTable
    table.setCurrentCell(0, column(window).column)
    qtbot.keyClick(table, Qt.Key.Key_Space)
    assert window.experiment_state.config.keep_float32 == ("fc1",)
    column(window).set_kept(0, False)
    assert window.experiment_state.config.keep_float32 == ()
    assert table.kept_rows() == [False, False, False]


def test_typed_patterns_check_every_row_they_name(window, qtbot):
    run_to_end(qtbot, window)
    edit = window.findChild(QLineEdit, "keepFloat32Edit")
    edit.setText("Linear, relu*")
    assert window.experiment_state.config.keep_float32 == ("Linear", "relu*")
    assert window.layerTable.kept_rows() == [True, True, True]
    assert edit.text() == "Linear, relu*"  # no echo rewrites what is being typed
    column(window).set_kept(2, False)  # fc2 is a Linear: the class pattern keeps it
    assert window.experiment_state.config.keep_float32 == ("Linear", "relu*")
    assert window.layerTable.kept_rows() == [True, True, True]
    note = window.findChild(QLabel, "keepFloat32Error")
    assert note.text().startswith("fc2 stays kept: the pattern 'Linear' names it")


def test_a_keep_set_from_another_tab_shows_here_and_survives_the_run(window, qtbot):
    run_to_end(qtbot, window)
    window.context.update_config(keep_float32=("relu1",))
    assert window.findChild(QLineEdit, "keepFloat32Edit").text() == "relu1"
    assert window.layerTable.kept_rows() == [False, True, False]
    window.batchSpin.setValue(TINY.batch + 1)  # an edit of another input
    result = run_to_end(qtbot, window)
    assert result.config.keep_float32 == ("relu1",) and result.config.batch == TINY.batch + 1
    assert [layer.kept_float32 for layer in result.layers] == [False, True, False]


def test_a_pattern_that_names_no_layer_is_refused_like_a_model_error(window, qtbot):
    window.context.update_config(keep_float32=("fc9",))
    with qtbot.waitSignal(window.experimentFailed, timeout=60_000) as failed:
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
    message = failed.args[0]
    assert message.startswith("keep_float32: 'fc9' matches no layer; nearest: ")
    assert "fc1" in message and "fc2" in message
    assert window.messageBanner.text() == f"Run failed: {message}"
    note = window.findChild(QLabel, "keepFloat32Error")
    assert note.text() == message.removeprefix("keep_float32: ")
    assert not window.runButton.isEnabled()  # the same keep set would fail again
    window.findChild(QLineEdit, "keepFloat32Edit").setText("fc2")
    assert note.text() == "" and window.runButton.isEnabled()
    assert run_to_end(qtbot, window).config.keep_float32 == ("fc2",)


def test_a_pattern_core_refuses_stays_in_the_field_with_run_off(window):
    before = window.experiment_state.config
    window.findChild(QLineEdit, "keepFloat32Edit").setText("fc2 fc\x01")
    note = window.findChild(QLabel, "keepFloat32Error")
    assert note.text() == "each pattern must be printable text (got 'fc\\x01')"
    assert window.experiment_state.config == before and not window.runButton.isEnabled()
    window.findChild(QLineEdit, "keepFloat32Edit").setText("fc2")
    assert window.experiment_state.config == before.replace(keep_float32=("fc2",))
    assert note.text() == "" and window.runButton.isEnabled()
