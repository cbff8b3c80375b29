"""Room for the result tabs in a narrow window: the controls column and the side docks give way.

At 1024 px with the Lessons panel the result tabs get what is left between the controls column
and the panel. First the column and the docks shrink to their own minimums, until the tabs have
`RESULTS_MIN_WIDTH`. At large text that is not enough (at 150%, 1024 px leaves the tabs about
270 px: every page scrolls sideways and its charts are squeezed flat), so a side dock then moves
below the results, where the tabs keep the width and the pages scroll down. It goes back to its
side as soon as the window is wide enough again. A dock the user placed is never moved: only one
this class moved below goes back, and one the user drags elsewhere is theirs from then on.

Widths are at 100% text and grow with the window's text scale (read from the result tabs' font,
which presentation mode sets), so a page's larger labels get the room they need.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QDockWidget,
    QMainWindow,
    QSplitter,
    QStyle,
    QWidget,
)

from autocast_explorer.gui.shell import style

#: The width the result tabs need before the controls column keeps more than its minimum.
RESULTS_MIN_WIDTH = 420
#: Below this the tabs are too narrow to read: a side dock moves below them.
RESULTS_NARROWEST = 360
#: How much wider than RESULTS_NARROWEST the tabs must be with the dock back at its side before
#: it returns (so a window resized by a pixel does not flip it back and forth).
RETURN_MARGIN = 8
#: The share of the window's height a dock moved below takes.
BELOW_SHARE = 0.35
SIDES = (Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.LeftDockWidgetArea)
#: Dynamic property on a dock this object follows.
_WATCHED = "aeResultRoomWatched"


@dataclass
class MovedDock:
    """Where a dock moved below the results came from, and how wide the user had it there."""

    side: Qt.DockWidgetArea
    width: int


class ResultRoom(QObject):
    """Keeps the result tabs readable as `window` narrows (see the module's docstring)."""

    def __init__(
        self, window: QMainWindow, splitter: QSplitter, column: QWidget, results: QWidget
    ) -> None:
        super().__init__(window)
        self.setObjectName("resultRoom")
        self._window = window
        self._splitter = splitter
        self._column = column
        self._results = results
        self._moved_below: dict[QDockWidget, MovedDock] = {}
        self._user_placed: set[QDockWidget] = set()
        self._busy = False
        # One pass after the splitter has handled its resize (its sizes() are stale before);
        # stopped when the window hides, so a closed window leaves no timer behind.
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.setInterval(0)
        self._later.timeout.connect(self.balance)
        window.installEventFilter(self)
        splitter.installEventFilter(self)
        results.installEventFilter(self)  # a new text scale: the widths it asks change

    # ---- what the text scale asks ---------------------------------------------------------
    def text_scale(self) -> float:
        """The window's text scale, read from the result tabs' font (presentation sets it)."""
        return style.text_scale(self._results)

    def min_width(self) -> int:
        return round(RESULTS_MIN_WIDTH * self.text_scale())

    def narrowest(self) -> int:
        return round(RESULTS_NARROWEST * self.text_scale())

    def moved_below(self) -> list[QDockWidget]:
        """The docks this object moved below the results (they return when there is room)."""
        return list(self._moved_below)

    def user_placed(self) -> list[QDockWidget]:
        """The docks the user moved since the layout was restored: never moved by this object."""
        return list(self._user_placed)

    # ---- events ---------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self._window and kind == QEvent.Type.Hide:
            self._later.stop()
            return False
        resized = watched is self._splitter and kind == QEvent.Type.Resize
        rescaled = watched is self._results and kind == QEvent.Type.FontChange
        if resized or rescaled:
            self.schedule()
        return False

    def is_pending(self) -> bool:
        """True while a pass is queued (after a resize or a new text scale, before it runs)."""
        return self._later.isActive()

    def schedule(self) -> None:
        """Balance once the events now queued have run (a shown window only)."""
        if self._window.isVisible() and not self._later.isActive():
            self._later.start()

    def _watch_docks(self) -> None:
        """Follow every dock: once the user moves one, it stays where they put it."""
        for dock in self._window.findChildren(QDockWidget):
            if not dock.property(_WATCHED):
                dock.setProperty(_WATCHED, True)
                dock.dockLocationChanged.connect(self._on_dock_moved)
                dock.topLevelChanged.connect(self._on_dock_moved)

    @Slot()
    def _on_dock_moved(self) -> None:
        if self._busy:
            return
        dock = self.sender()
        if isinstance(dock, QDockWidget):
            self._moved_below.pop(dock, None)
            self._user_placed.add(dock)

    def restore_state(self, state: QByteArray) -> bool:
        """The window's restoreState(): the layout restored is no move of the user's, and no
        dock is below because of this window's size any more; then balance again."""
        self._busy = True
        try:
            restored = self._window.restoreState(state)
        finally:
            self._busy = False
        self._moved_below.clear()
        self._user_placed.clear()
        self.schedule()
        return restored

    # ---- the policy -----------------------------------------------------------------------
    @Slot()
    def balance(self) -> None:
        """Give the result tabs room: the column first, then the side docks, then move the
        side docks below; bring them back to their side when the window is wide enough."""
        if self._busy:
            return
        self._busy = True
        try:
            self._watch_docks()
            self._return_docks()
            width = self._results_width()
            wanted = self.min_width() - width
            if wanted > 0:
                given = self._shrink_column(wanted)
                # resizeDocks takes effect at the next layout pass: count what it will give.
                given += self._shrink_docks(wanted - given)
                width += given
            if width < self.narrowest():
                self._move_docks_below()
            # Lay the window out now, not at the next pass of the event loop: when this pass
            # is no longer pending, the tabs already have the width it gave them.
            QCoreApplication.sendPostedEvents(self._window, QEvent.Type.LayoutRequest)
        finally:
            self._busy = False

    def _results_width(self) -> int:
        return self._splitter.sizes()[1]

    def _column_floor(self) -> int:
        return max(self._column.minimumWidth(), self._column.minimumSizeHint().width())

    def _shrink_column(self, wanted: int) -> int:
        left, right = self._splitter.sizes()
        give = min(wanted, left - self._column_floor())
        if give <= 0:
            return 0
        self._splitter.setSizes([left - give, right + give])
        return give

    def _side_docks(self) -> list[QDockWidget]:
        """Docked at a side and shown: the docks that take the results' width."""
        return [
            dock
            for dock in self._window.findChildren(QDockWidget)
            if dock.isVisible()
            and not dock.isFloating()
            and self._window.dockWidgetArea(dock) in SIDES
        ]

    @staticmethod
    def _dock_floor(dock: QDockWidget) -> int:
        return max(dock.minimumWidth(), dock.minimumSizeHint().width())

    def _shrink_docks(self, wanted: int) -> int:
        """Narrow the side docks toward their minimum; returns the pixels they give."""
        given = 0
        for dock in self._side_docks():
            if wanted - given <= 0:
                break
            shrink = min(dock.width() - self._dock_floor(dock), wanted - given)
            if shrink > 0:
                self._window.resizeDocks([dock], [dock.width() - shrink], Qt.Orientation.Horizontal)
                given += shrink
        return given

    def _move_docks_below(self) -> None:
        """Every side dock the user did not place moves below the results, full width."""
        height = round(self._window.height() * BELOW_SHARE)
        for dock in self._side_docks():
            if dock in self._user_placed:
                continue
            self._moved_below[dock] = MovedDock(self._window.dockWidgetArea(dock), dock.width())
            self._window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            wanted = max(height, dock.minimumSizeHint().height())
            self._window.resizeDocks([dock], [wanted], Qt.Orientation.Vertical)

    def _return_docks(self) -> None:
        """The docks moved below go back to their sides, all together, once the tabs would keep
        enough width beside all of them (one at a time, two docks would come back and go
        below again for ever); each as wide as it was, where the room allows."""
        shown = {dock: moved for dock, moved in self._moved_below.items() if dock.isVisible()}
        if not shown:
            return  # a hidden dock costs no width: decide when it is shown again
        separator = self._window.style().pixelMetric(
            QStyle.PixelMetric.PM_DockWidgetSeparatorExtent, None, self._window
        )
        room = self._splitter.width() - self._column_floor() - self._splitter.handleWidth()
        room -= sum(self._dock_floor(dock) + separator for dock in shown)
        spare = room - self.narrowest() - RETURN_MARGIN
        if spare < 0:
            return
        for dock, moved in shown.items():
            del self._moved_below[dock]
            self._window.addDockWidget(moved.side, dock)
            floor = self._dock_floor(dock)
            width = min(moved.width, floor + spare)
            spare -= width - floor
            self._window.resizeDocks([dock], [width], Qt.Orientation.Horizontal)

    def saved_state(self) -> QByteArray:
        """The window's saveState() with every dock moved below back at its side: the layout
        the user chose, not the one this window size forced."""
        if not self._moved_below:
            return self._window.saveState()
        self._busy = True
        try:
            for dock, moved in self._moved_below.items():
                self._window.addDockWidget(moved.side, dock)
                self._window.resizeDocks([dock], [moved.width], Qt.Orientation.Horizontal)
            state = self._window.saveState()
            for dock in self._moved_below:
                self._window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        finally:
            self._busy = False
        return state
