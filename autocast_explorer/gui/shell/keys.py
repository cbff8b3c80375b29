"""Keyboard conventions: Qt's standard keys where one exists, and the keys no action may take.

A shortcut is checked against two things. The platform's standard keys (QKeySequence
.StandardKey): an action that means Save, Quit or Full screen uses that standard key, so each
platform gets its own binding (⌃⌘F for full screen on macOS, F11 elsewhere); a custom shortcut
must not take a key the platform reserves for another standard meaning (Ctrl+P is Print), except
where the meaning is the same and listed in SHARED_ON_PURPOSE. And the keys the desktop itself
takes before the application sees them (SYSTEM_KEYS): Ctrl+H in Qt's notation is ⌘H, which
hides the application on macOS.

Qt's portable notation is used throughout: on macOS "Ctrl" is ⌘ and "Meta" is ⌃.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence

StandardKey = QKeySequence.StandardKey
PORTABLE = QKeySequence.SequenceFormat.PortableText
#: The dynamic property naming the standard key an action was given (set_standard_shortcuts).
STANDARD_KEY_PROPERTY = "aeStandardKey"


@dataclass(frozen=True)
class SystemKey:
    """A key a desktop takes for itself: the application never receives it (or must not)."""

    keys: str
    platform: str
    what: str


SYSTEM_KEYS: tuple[SystemKey, ...] = (
    SystemKey("Ctrl+H", "macOS", "hide the application (⌘H)"),
    SystemKey("Ctrl+Alt+H", "macOS", "hide the other applications (⌥⌘H)"),
    SystemKey("Ctrl+M", "macOS", "minimise the window (⌘M)"),
    SystemKey("Ctrl+Tab", "macOS", "switch applications (⌘Tab)"),
    SystemKey("Ctrl+`", "macOS", "cycle the application's windows (⌘`)"),
    SystemKey("Ctrl+Space", "macOS", "Spotlight (⌘Space)"),
    SystemKey("Ctrl+Alt+Space", "macOS", "Finder search (⌥⌘Space)"),
    SystemKey("Ctrl+Alt+D", "macOS", "show or hide the Dock (⌥⌘D); show the desktop (GNOME)"),
    SystemKey("Ctrl+Alt+Esc", "macOS", "Force Quit (⌥⌘Esc)"),
    SystemKey("Ctrl+Shift+3", "macOS", "screenshot (⇧⌘3)"),
    SystemKey("Ctrl+Shift+4", "macOS", "screenshot of a selection (⇧⌘4)"),
    SystemKey("Ctrl+Shift+5", "macOS", "screenshot tool (⇧⌘5)"),
    SystemKey("Ctrl+Meta+Q", "macOS", "lock the screen (⌃⌘Q)"),
    SystemKey("Ctrl+Meta+Space", "macOS", "character viewer (⌃⌘Space)"),
    SystemKey("F11", "macOS", "show the desktop (full screen there is ⌃⌘F)"),
    SystemKey("F12", "macOS", "volume up on Mac keyboards"),
    SystemKey("Alt+F4", "Windows, Linux", "close the window"),
    SystemKey("Alt+Tab", "Windows, Linux", "switch windows"),
    SystemKey("Alt+Shift+Tab", "Windows, Linux", "switch windows backwards"),
    SystemKey("Alt+Space", "Windows, Linux", "the window menu"),
    SystemKey("Alt+Esc", "Windows", "cycle windows"),
    SystemKey("Ctrl+Esc", "Windows", "the Start menu"),
    SystemKey("Ctrl+Shift+Esc", "Windows", "Task Manager"),
    SystemKey("Ctrl+Alt+Del", "Windows, Linux", "the security screen / log out"),
    SystemKey("F10", "Windows, Linux", "activate the menu bar"),
    SystemKey("Alt+F1", "Linux", "activities overview / application menu (GNOME, KDE)"),
    SystemKey("Alt+F2", "Linux", "run a command (GNOME, KDE)"),
    SystemKey("Alt+F7", "Linux", "move the window (GNOME)"),
    SystemKey("Alt+F8", "Linux", "resize the window (GNOME)"),
    SystemKey("Alt+F10", "Linux", "maximise the window (GNOME)"),
    SystemKey("Ctrl+Alt+T", "Linux", "open a terminal (Ubuntu)"),
    SystemKey("Ctrl+Alt+L", "Linux", "lock the screen (KDE, older Ubuntu)"),
    SystemKey("Ctrl+Alt+Left", "Linux", "switch workspace"),
    SystemKey("Ctrl+Alt+Right", "Linux", "switch workspace"),
    SystemKey("Ctrl+Alt+Up", "Linux", "switch workspace"),
    SystemKey("Ctrl+Alt+Down", "Linux", "switch workspace"),
    SystemKey("Ctrl+Alt+Backspace", "Linux", "kill the X server"),
    SystemKey("Print", "Windows, Linux", "screenshot"),
)

#: Modifiers a desktop keeps: Meta is the Windows / Super key on Windows and Linux.
SYSTEM_MODIFIERS = {"Meta": "Windows, Linux: the Super key belongs to the desktop"}

#: Action objectName → the standard key it shares on purpose, and why that is the same meaning.
SHARED_ON_PURPOSE: dict[str, tuple[StandardKey, str]] = {
    "Run_experiment": (StandardKey.Refresh, "F5 measures again: a refresh of what is shown"),
    "Cancel_run": (StandardKey.Cancel, "Esc cancels the running measurement"),
    "Previous_step": (StandardKey.MoveToPreviousPage, "PgUp turns back a lesson's page"),
    "Next_step": (StandardKey.MoveToNextPage, "PgDn turns a lesson's page"),
}


#: Where a platform binds nothing to a standard key: Qt's generic theme (and Windows, where
#: Alt+F4 closes windows) has no Quit key; Linux desktops and macOS use Ctrl+Q (⌘Q).
STANDARD_FALLBACKS: dict[StandardKey, str] = {StandardKey.Quit: "Ctrl+Q"}

Shortcut = str | QKeySequence | StandardKey


def standard_shortcuts(key: StandardKey) -> list[QKeySequence]:
    """The platform's bindings for `key`, or its STANDARD_FALLBACKS entry where there are none."""
    bindings = list(QKeySequence.keyBindings(key))
    if not bindings and key in STANDARD_FALLBACKS:
        bindings = [QKeySequence(STANDARD_FALLBACKS[key])]
    return bindings


def set_shortcuts(action: QAction, keys: Shortcut | Iterable[Shortcut]) -> None:
    """Give `action` its keys; a StandardKey brings all of this platform's bindings for it.

    `[StandardKey.ZoomIn, "Ctrl+="]` is Zoom in's platform keys plus Ctrl+= (for keyboards
    where + needs Shift). The standard key is remembered on the action (standard_key_of), so
    shortcut_conflicts knows those keys are the platform's choice.
    """
    items = [keys] if isinstance(keys, str | QKeySequence | StandardKey) else list(keys)
    sequences: list[QKeySequence] = []
    for item in items:
        if isinstance(item, StandardKey):
            sequences += standard_shortcuts(item)
            action.setProperty(STANDARD_KEY_PROPERTY, item.name)
        else:
            sequences.append(item if isinstance(item, QKeySequence) else QKeySequence(item))
    unique: list[QKeySequence] = []
    for sequence in sequences:
        if sequence not in unique:
            unique.append(sequence)
    action.setShortcuts(unique)


def standard_key_of(action: QAction) -> StandardKey | None:
    """The standard key `action` was given with set_shortcuts, if any."""
    name = action.property(STANDARD_KEY_PROPERTY)
    return QKeySequence.StandardKey[name] if name else None  # the alias reads as a type to mypy


def portable(sequence: QKeySequence) -> str:
    return sequence.toString(PORTABLE)


def system_conflicts(sequence: QKeySequence) -> list[str]:
    """What the desktops do with `sequence` ('macOS: hide the application (⌘H)'), [] if none."""
    text = portable(sequence)
    found = [f"{k.platform}: {k.what}" for k in SYSTEM_KEYS if k.keys == text]
    parts = text.split("+")[:-1]
    found += [f"{why}" for modifier, why in SYSTEM_MODIFIERS.items() if modifier in parts]
    return found


def standard_meanings(sequence: QKeySequence) -> list[StandardKey]:
    """The standard keys this platform binds `sequence` to."""
    return [key for key in StandardKey if sequence in QKeySequence.keyBindings(key)]


def shortcut_conflicts(actions: Iterable[QAction]) -> list[str]:
    """One line per shortcut that collides with a system key or another standard meaning.

    A key the platform binds to a standard meaning belongs to the action given that standard
    key (set_standard_shortcuts) or to one sharing it on purpose (SHARED_ON_PURPOSE). Keys that
    came from the action's own standard key are the platform's choice and not checked against
    other desktops' system keys (F11 is full screen on Linux; macOS binds ⌃⌘F instead).
    """
    problems = []
    for action in actions:
        name = action.objectName() or action.text().replace("&", "")
        own_standard = standard_key_of(action)
        shared = SHARED_ON_PURPOSE.get(action.objectName(), (None, ""))[0]
        from_platform = (
            set(QKeySequence.keyBindings(own_standard)) if own_standard is not None else set()
        )
        for sequence in action.shortcuts():
            if sequence not in from_platform:
                for problem in system_conflicts(sequence):
                    problems.append(f"{name}: {portable(sequence)} — {problem}")
            for key in standard_meanings(sequence):
                if key not in (own_standard, shared):
                    problems.append(
                        f"{name}: {portable(sequence)} is this platform's {key.name} key"
                    )
    return problems
