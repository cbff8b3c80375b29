"""The one action factory: text, key, tooltip that names the key, menu place, enabled-when.

Every menu entry of the window is made by `ActionRegistry.add`, so each has an objectName, a
tooltip and status tip ending with its key, and a rule for when it is enabled that is checked
again whenever the window's state changes (`refresh`). Features describe actions as data
instead of wiring QAction by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from autocast_explorer.gui.shell.keys import Shortcut, set_shortcuts


def shortcut_text(action: QAction) -> str:
    """The action's shortcuts as a person reads them ('Ctrl++, Ctrl+=').

    Keys of dedicated keyboards (the Open, Save or Zoom In key a standard key also binds) work
    but are not listed: "Ctrl+S, Save" would read as two instructions.
    """
    keys = [
        s.toString(QKeySequence.SequenceFormat.NativeText)
        for s in action.shortcuts()
        if not is_dedicated_key(s)
    ]
    return ", ".join(k for k in keys if k)


def is_dedicated_key(sequence: QKeySequence) -> bool:
    """A key only some keyboards have (Help, and Qt's multimedia and launch keys)."""
    if sequence.count() != 1:
        return False
    key = sequence[0].key()  # type: ignore[index]  # the stub lacks QKeySequence.__getitem__
    return key == Qt.Key.Key_Help or key.value >= Qt.Key.Key_Back.value


def set_tip(action: QAction, tip: str) -> None:
    """Tooltip and status tip that end with the action's shortcut, e.g. 'Bigger text (Ctrl+=)'."""
    keys = shortcut_text(action)
    text = tip
    if keys and keys not in tip:
        stem = tip.rstrip(".")
        text = f"{stem} ({keys})" + ("." if stem != tip else "")
    action.setToolTip(text)
    action.setStatusTip(text)


def object_name(text: str) -> str:
    """'&Save result as JSON…' → 'Save_result_as_JSON' (the default objectName).

    Only letters, digits and '_' are kept ("Add this window's run" → 'Add_this_windows_run'),
    so every name is an identifier a test can write and a snapshot can list.
    """
    words = text.split("\t")[0].replace("&", "").rstrip("…").strip().replace(" ", "_")
    return "".join(c for c in words if c.isalnum() or c == "_")


def make_action(
    parent: QObject,
    text: str,
    handler: Callable[..., Any] | None = None,
    *,
    shortcut: Shortcut | Sequence[Shortcut] | None = None,
    tip: str = "",
    name: str | None = None,
    checkable: bool = False,
    context: Qt.ShortcutContext | None = None,
) -> QAction:
    """A QAction with objectName, key(s) and a tooltip that ends with the key."""
    action = QAction(text, parent)
    action.setObjectName(name or object_name(text))
    if shortcut is not None:
        set_shortcuts(action, shortcut)  # a StandardKey: this platform's keys for it
    if context is not None:
        action.setShortcutContext(context)
    action.setCheckable(checkable)
    if handler is not None:
        (action.toggled if checkable else action.triggered).connect(handler)
    if tip:
        set_tip(action, tip)
    return action


def place(menu: QMenu, action: QAction, before: str | QAction | None = None) -> None:
    """Add `action` to `menu`, before the entry (or submenu) with objectName `before`."""
    anchor = find_entry(menu, before) if isinstance(before, str) else before
    if anchor is not None:
        menu.insertAction(anchor, action)
    else:
        menu.addAction(action)


def find_entry(menu: QMenu, name: str) -> QAction | None:
    """The menu's entry whose action (or submenu) has objectName `name`."""
    for entry in menu.actions():
        if entry.objectName() == name or (entry.menu() and entry.menu().objectName() == name):
            return entry
    return None


class ActionRegistry(QObject):
    """Every action added through the factory, with the rule that enables it."""

    def __init__(self, window: QWidget, menu: Callable[[str], QMenu]) -> None:
        super().__init__(window)
        self._window = window
        self._menu = menu
        self._rules: list[tuple[QAction, Callable[[], bool]]] = []

    def add(
        self,
        text: str,
        handler: Callable[..., Any] | None = None,
        *,
        menu: str | QMenu | None = None,
        before: str | QAction | None = None,
        enabled_when: Callable[[], bool] | None = None,
        **options: Any,
    ) -> QAction:
        """Make the action (see `make_action`), put it in `menu` and follow `enabled_when`."""
        action = make_action(self._window, text, handler, **options)
        self._window.addAction(action)  # its key works even while its menu is hidden
        if menu is not None:
            place(self._menu(menu) if isinstance(menu, str) else menu, action, before)
        if enabled_when is not None:
            self._rules.append((action, enabled_when))
            action.setEnabled(bool(enabled_when()))
        return action

    def refresh(self) -> None:
        """Check every enabled-when rule again (after any change of state)."""
        for action, rule in self._rules:
            action.setEnabled(bool(rule()))


def audit_shortcuts(window: QWidget) -> list[QAction]:
    """Append each menu action's shortcut to its tooltip where missing; menus show tooltips.

    Returns the actions of the window's menus that still have no shortcut (for the README).
    """
    missing = []
    for menu in window.findChildren(QMenu):
        menu.setToolTipsVisible(True)
        for action in menu.actions():
            if action.isSeparator() or action.menu() is not None:
                continue
            keys = shortcut_text(action)
            tip = action.toolTip() or action.text().replace("&", "").rstrip("…").strip()
            if keys:
                if keys not in tip:
                    set_tip(action, tip)
            elif "\t" not in action.text():
                missing.append(action)
    return missing
