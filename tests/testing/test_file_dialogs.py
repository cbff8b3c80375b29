"""file_dialogs answers QFileDialog's static methods in order and records every dialog."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.testing import DialogRequest, UnexpectedFileDialog
from autocast_explorer.testing.dialogs import matching_filter


def test_answers_in_order_with_the_filter_that_matches(file_dialogs, tmp_path):
    target = tmp_path / "run.svg"
    file_dialogs.answer(target, [tmp_path / "a.json", tmp_path / "b.json"], tmp_path)
    saved = QFileDialog.getSaveFileName(None, "Export chart", "x.png", "PNG (*.png);;SVG (*.svg)")
    opened = QFileDialog.getOpenFileNames(None, "Add result files", str(tmp_path), "JSON (*.json)")
    folder = QFileDialog.getExistingDirectory(None, "Export report into folder", "/start")
    assert saved == (str(target), "SVG (*.svg)")
    assert opened == ([str(tmp_path / "a.json"), str(tmp_path / "b.json")], "JSON (*.json)")
    assert folder == str(tmp_path)
    assert file_dialogs.asked == [
        DialogRequest(
            "getSaveFileName", "Export chart", "x.png", "PNG (*.png);;SVG (*.svg)", str(target)
        ),
        DialogRequest(
            "getOpenFileNames",
            "Add result files",
            str(tmp_path),
            "JSON (*.json)",
            [str(tmp_path / "a.json"), str(tmp_path / "b.json")],
        ),
        DialogRequest(
            "getExistingDirectory", "Export report into folder", "/start", "", str(tmp_path)
        ),
    ]
    assert file_dialogs.pending() == 0


def test_cancel_returns_what_qt_returns_on_cancel(file_dialogs):
    file_dialogs.cancel()
    file_dialogs.cancel()
    assert QFileDialog.getOpenFileName(None, "Open result") == ("", "")
    assert QFileDialog.getOpenFileNames(None, "Add") == ([], "")
    assert [request.answer for request in file_dialogs.asked] == [None, None]


def test_keyword_arguments_and_url_variants(file_dialogs, tmp_path):
    file_dialogs.answer(tmp_path / "r.json")
    url, chosen = QFileDialog.getSaveFileUrl(caption="Save", filter="JSON (*.json)")
    assert url == QUrl.fromLocalFile(str(tmp_path / "r.json"))
    assert chosen == "JSON (*.json)"
    assert file_dialogs.asked[0].caption == "Save"


def test_a_dialog_with_no_answer_queued_fails_and_names_it(file_dialogs):
    with pytest.raises(UnexpectedFileDialog, match=r"getOpenFileName.*'Open result'"):
        QFileDialog.getOpenFileName(None, "Open result", "", "JSON (*.json)")
    assert file_dialogs.asked[0].answer is None


def test_a_single_path_dialog_refuses_a_queued_list(file_dialogs, tmp_path):
    file_dialogs.answer([tmp_path / "a.json", tmp_path / "b.json"])
    with pytest.raises(UnexpectedFileDialog, match="returns one path"):
        QFileDialog.getOpenFileName(None, "Open result")


@pytest.mark.parametrize(
    ("filters", "path", "expected"),
    [
        ("PNG (*.png);;SVG (*.svg)", "c.SVG", "SVG (*.svg)"),
        ("Result JSON (*.json);;All files (*)", "c.txt", "All files (*)"),
        ("Images (*.png *.jpg)", "c.jpg", "Images (*.png *.jpg)"),
        ("PNG (*.png)", "c.csv", "PNG (*.png)"),
        ("", "c.csv", ""),
    ],
)
def test_matching_filter(filters, path, expected):
    assert matching_filter(filters, path) == expected
