"""Help › Autocast Explorer Help (F1): the live shortcut table and the README, at the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QTextBrowser

from autocast_explorer.gui.shell.keys import StandardKey
from autocast_explorer.gui.window.help_window import START_SECTION, manual_markdown, shortcut_rows


def test_the_help_key_opens_the_manual_at_the_windows_section(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    help_key = QKeySequence.keyBindings(StandardKey.HelpContents)[0][0]
    qtbot.keyClick(window, help_key.key(), help_key.keyboardModifiers())
    dialog = window.findChild(QDialog, "helpWindow")
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    browser = dialog.findChild(QTextBrowser, "helpBrowser")
    assert START_SECTION in dialog.heading_titles()
    assert dialog.heading_titles()[0] == "Keyboard shortcuts"
    text = browser.toPlainText()
    assert "python -m autocast_explorer" in text  # the README's own words
    assert "![" not in text  # its screenshots are files beside it, left out
    # Opened at the section: its heading is the first line in view.
    assert browser.verticalScrollBar().value() > 0
    first_visible = browser.cursorForPosition(QPoint(8, 8)).block()
    assert first_visible.text().strip() == START_SECTION
    dialog.closeAction.trigger()
    assert not dialog.isVisible()


def test_the_shortcut_table_is_the_menus(window):
    rows = dict(shortcut_rows(window.menuBar()))
    assert rows["File › Save result"] == window.saveJsonAction.shortcut().toString(
        QKeySequence.SequenceFormat.NativeText
    )
    assert rows["View › Hide controls"] == "Ctrl+Shift+C"
    assert rows["Run › Run experiment"] == "F5"
    assert "Help › About Autocast Explorer" not in rows  # no key, so not in the table
    window.show_help()
    text = window.findChild(QTextBrowser, "helpBrowser").toPlainText()
    for entry, keys in rows.items():
        assert entry in text and keys in text, entry


def test_the_manual_is_the_readme_of_this_checkout():
    text = manual_markdown()
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# Autocast Explorer")
    assert "## Install as a user\n" in text
    assert len(text) > 0.9 * len(readme)  # the whole README, less its picture lines
    assert f"## {START_SECTION}\n" in text
