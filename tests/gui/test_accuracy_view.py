"""The window on real data: the data selector, the Accuracy tab's flipped digits and confusion,
training mode's per-epoch accuracy, and a bad file's one-line refusal."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QTableWidget, QWidget

from autocast_explorer.core.data.answers import compare_answers
from autocast_explorer.gui.features.accuracy.gallery import FlipTile, row_image
from tests.edits import edited
from tests.gui.helpers import TINY, run_to_end

DIGITS = TINY.replace(data="digits", widths=(64, 16, 10), epochs=2, batch=64, threads=1)


def test_the_data_selector_offers_synthetic_digits_and_a_file(window, file_dialogs, tmp_path):
    combo = window.findChild(QComboBox, "dataCombo")
    assert [combo.itemData(i) for i in range(combo.count())] == ["synthetic", "digits", ""]
    assert combo.itemText(2) == "File…" and combo.toolTip()
    assert window.current_config().data == "synthetic"
    assert not window.controls.epochsSpin.isVisibleTo(window.controls)
    combo.setCurrentIndex(1)
    assert window.current_config().data == "digits"
    assert window.controls.epochsSpin.isVisibleTo(window.controls)
    path = tmp_path / "mine.npz"
    file_dialogs.answer(str(path))
    combo.setCurrentIndex(2)  # "File…", chosen in code as by a click: one dialog
    assert [request.caption for request in file_dialogs.asked] == ["Open data"]
    assert window.current_config().data == str(path)
    assert combo.currentText() == "mine.npz"
    file_dialogs.cancel()  # cancelling the dialog keeps the file chosen before
    combo.setCurrentIndex(combo.count() - 1)
    assert len(file_dialogs.asked) == 2 and file_dialogs.pending() == 0
    assert window.current_config().data == str(path)
    assert combo.currentText() == "mine.npz"


def test_a_digits_run_shows_both_accuracies_and_the_flipped_digits(window, qtbot):
    window.set_config(DIGITS)
    result = run_to_end(qtbot, window)
    acc = result.accuracy
    view = window.findChild(QWidget, "accuracyView")
    assert window.resultTabs.currentWidget() is view
    summary = window.findChild(QLabel, "accuracySummary").text()
    assert f"float32 <b>{acc.plain:.2%}</b>" in summary
    assert f"bfloat16 autocast <b>{acc.autocast:.2%}</b>" in summary and "95% interval" in summary
    plot = window.findChild(pg.PlotWidget, "epochAccuracyPlot")
    history = [(h.epoch, h.accuracy * 100) for h in result.data.history]
    assert plot.drawn()["plain"] == [(float(e), a) for e, a in history]
    # Flips drawn as pictures: a result with three flipped rows (forced, to see them drawn).
    labels = np.array([3, 5, 7])
    plain = np.eye(10, dtype=np.float32)[[3, 5, 1]]
    auto = np.eye(10, dtype=np.float32)[[8, 5, 7]] * 2 + plain
    rows = np.stack([np.arange(64, dtype=np.float32).reshape(1, 8, 8)] * 3)
    forced = compare_answers(labels, plain, auto, "bfloat16", 0, rows=rows)
    window.show_result(edited(result, accuracy=forced))
    tiles = view.findChildren(FlipTile)
    assert [t.flip.label for t in tiles] == [3, 7]  # row 1 kept its answer
    assert "true label 3" in tiles[0].toolTip() and "float32 says 3" in tiles[0].toolTip()
    assert "bfloat16 autocast says 8 (margin 1)" in tiles[0].toolTip()
    assert "2 of 3 rows changed their answer" in window.findChild(QLabel, "flipNote").text()
    confusion = window.findChild(QTableWidget, "flipConfusionTable")
    cells = {
        (confusion.verticalHeaderItem(r).text(), confusion.horizontalHeaderItem(c).text()): (
            confusion.item(r, c).text()
        )
        for r in range(confusion.rowCount())
        for c in range(confusion.columnCount())
    }
    assert cells == {
        ("fp32 3", "→ 7"): "",
        ("fp32 3", "→ 8"): "1",
        ("fp32 1", "→ 7"): "1",
        ("fp32 1", "→ 8"): "",
    }


def test_a_thumbnail_draws_ink_dark_and_background_white():
    values = tuple([0.0] * 63 + [16.0])
    image = row_image(values, (1, 8, 8), 64)
    assert image.width() == 64 and image.height() == 64
    assert image.pixelColor(0, 0).name() == "#ffffff"
    assert image.pixelColor(63, 63).name() == "#000000"  # the last pixel, enlarged 8×


def test_training_mode_on_digits_draws_both_copies_per_epoch(window, qtbot):
    window.set_config(DIGITS.replace(mode="train"))
    result = run_to_end(qtbot, window)
    drawn = window.findChild(pg.PlotWidget, "epochAccuracyPlot").drawn()
    epochs = result.train.epochs
    assert [e.epoch for e in epochs] == [1, 2]
    assert drawn["autocast"] == [(float(e.epoch), e.accuracy["autocast"] * 100) for e in epochs]
    assert drawn["plain"] == [(float(e.epoch), e.accuracy["plain"] * 100) for e in epochs]


def test_a_bad_data_file_is_one_line_in_the_banner_and_under_the_selector(window, qtbot, tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, x=np.zeros((4, 64)), y=np.zeros(3))
    window.set_config(DIGITS.replace(data=str(path)))
    with qtbot.waitSignal(window.experimentFailed, timeout=30_000) as failed:
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
    assert failed.args[0] == "data: x has 4 rows but y has 3: lengths differ"
    assert window.controls.errors()["data"] == "x has 4 rows but y has 3: lengths differ"


def test_a_run_whose_data_set_the_models_input_is_not_marked_stale(window, qtbot):
    # Digits are 1×8×8 and have 10 classes: the run's config takes them from the data, so
    # the result's config differs from the controls' by design, and the result is current.
    asked = DIGITS.replace(model="cnn", channels=(3, 8), image=32, classes=4, epochs=1)
    window.set_config(asked)
    started = window.current_config()
    result = run_to_end(qtbot, window)
    assert (result.config.channels[0], result.config.image) == (1, 8)
    assert result.config != window.current_config() == started
    assert window.staleLabel.isHidden() and window.staleLabel.text() == ""
    window.batchSpin.setValue(32)  # now the controls describe another run
    assert not window.staleLabel.isHidden()
    assert window.staleLabel.text().startswith("Result is for CNN 1→8 · image 8")
