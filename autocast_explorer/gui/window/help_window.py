"""Help › Autocast Explorer Help (F1): the keyboard shortcuts and the README, inside the program.

The README is the manual. An installed wheel has no README.md file, but its metadata carries the
README as the long description, so the help reads it from there (a source checkout reads the
file itself, which is newer than the metadata of an editable install). The shortcut table is
built from the window's own actions, so it cannot disagree with the menus.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Slot
from PySide6.QtGui import QAction, QDesktopServices, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMenu,
    QMenuBar,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

import autocast_explorer
from autocast_explorer.gui.shell.actions import make_action, shortcut_text
from autocast_explorer.gui.shell.keys import StandardKey

DISTRIBUTION = "autocast-explorer"
#: The README section the help opens at: what a person looking at the window wants first.
START_SECTION = "The window"
NO_MANUAL = (
    "The manual (README) could not be found in this installation. "
    "`autocast-explorer --help` and each command's `--help` describe the command line."
)
_IMAGE = re.compile(r"^!\[[^\]]*\]\([^)]*\)\s*$", re.MULTILINE)


def manual_markdown() -> str:
    """The README's Markdown, without its screenshots (they are files beside it, not shipped)."""
    checkout = Path(autocast_explorer.__file__).resolve().parents[1] / "README.md"
    text = None
    if checkout.is_file() and (checkout.parent / "pyproject.toml").is_file():
        text = checkout.read_text(encoding="utf-8")
    else:
        try:
            text = metadata.metadata(DISTRIBUTION).get_payload()  # type: ignore[attr-defined]
        except metadata.PackageNotFoundError:
            text = None
    if not text or not text.strip():
        return NO_MANUAL
    return _IMAGE.sub("", text)


def shortcut_rows(menu_bar: QMenuBar) -> list[tuple[str, str]]:
    """('File › Save result', 'Ctrl+S') for every menu entry with a key, in menu order."""
    rows = []
    for top in menu_bar.actions():
        menu = top.menu()  # a QMenu, typed QObject by the stub
        if not isinstance(menu, QMenu):
            continue
        title = top.text().replace("&", "")
        for action in _entries(menu.actions()):
            keys = shortcut_text(action)
            if not keys and "\t" in action.text():
                keys = action.text().split("\t", 1)[1]
            if keys:
                entry = action.text().split("\t")[0].replace("&", "").rstrip("…").strip()
                rows.append((f"{title} › {entry}", keys))
    return rows


def _entries(actions: list[QAction]) -> list[QAction]:
    flat = []
    for action in actions:
        submenu = action.menu()
        if isinstance(submenu, QMenu):
            flat += _entries(submenu.actions())
        elif not action.isSeparator():
            flat.append(action)
    return flat


def shortcuts_markdown(menu_bar: QMenuBar) -> str:
    rows = "\n".join(f"| {keys} | {entry} |" for entry, keys in shortcut_rows(menu_bar))
    return f"# Keyboard shortcuts\n\n| Keys | Menu entry |\n| --- | --- |\n{rows}\n"


class HelpWindow(QDialog):
    """A non-modal window with the shortcuts and the manual, opened at START_SECTION."""

    def __init__(self, parent: QWidget, menu_bar: QMenuBar) -> None:
        super().__init__(parent)
        self.setObjectName("helpWindow")
        self.setWindowTitle("Autocast Explorer Help")
        self.setModal(False)
        self.resize(820, 700)
        self.browser = QTextBrowser()
        self.browser.setObjectName("helpBrowser")
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._open_link)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.closeAction = make_action(
            self, "Close", self.close, shortcut=StandardKey.Close, tip="Close the help"
        )
        self.addAction(self.closeAction)
        self._menu_bar = menu_bar
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the text (the shortcut table follows the menus as they are now)."""
        text = f"{shortcuts_markdown(self._menu_bar)}\n{manual_markdown()}"
        self.browser.setMarkdown(text)

    def show_section(self, title: str = START_SECTION) -> bool:
        """Scroll so the heading `title` is at the top; False if the manual has none."""
        document = self.browser.document()
        block = document.begin()
        while block.isValid():
            if block.blockFormat().headingLevel() and block.text().strip() == title:
                top = document.documentLayout().blockBoundingRect(block).top()
                self.browser.verticalScrollBar().setValue(int(top))
                return True
            block = block.next()
        return False

    def heading_titles(self) -> list[str]:
        document: QTextDocument = self.browser.document()
        titles = []
        block = document.begin()
        while block.isValid():
            if block.blockFormat().headingLevel():
                titles.append(block.text().strip())
            block = block.next()
        return titles

    @Slot(QUrl)
    def _open_link(self, url: QUrl) -> None:
        """Web links open in the browser; links to the README's own files lead nowhere here."""
        if url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)
        elif url.hasFragment() and not url.path():
            self.browser.scrollToAnchor(url.fragment())


def show_help(window: QWidget, menu_bar: QMenuBar, existing: HelpWindow | None) -> HelpWindow:
    """Show (creating once) the help window at the start section; returns it to keep."""
    help_window = existing if existing is not None else HelpWindow(window, menu_bar)
    help_window.refresh()
    help_window.show()
    help_window.raise_()
    help_window.activateWindow()
    help_window.show_section()
    help_window.setWindowState(help_window.windowState() & ~Qt.WindowState.WindowMinimized)
    return help_window
