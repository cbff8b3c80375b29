"""The result shown: every result view draws it, the status bar gives its verdict, and the
stale mark says when the controls describe another config.

A run, an opened file and a lesson step all end in `show` here, so each view sees one result
whichever way it came. One broken view must not take the window down: its failure goes to the
banner and the other views still draw.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLabel, QTabWidget, QWidget

from autocast_explorer.core.experiment.config_words import config_line
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.gui.shell.result_view import ResultView

log = logging.getLogger(__name__)

STALE_TIP = (
    "The controls no longer describe the result shown: its numbers are for the config named "
    "here. Run (F5) measures the controls' config; setting them back clears this."
)


class ResultHost(Protocol):
    """What the router keeps on the window: the result shown and the file it came from (both
    public attributes testers read)."""

    last_result: ExperimentResult | None
    result_path: Path | None

    def current_config(self) -> ExperimentConfig: ...
    def show_banner(self, text: str) -> None: ...


def stale_label() -> QLabel:
    """The mark above the tabs while the controls describe another config than the result."""
    label = QLabel("")
    label.setObjectName("staleLabel")
    label.setWordWrap(True)
    label.setStyleSheet(
        f"color: {style.WARN}; border: 1px solid {style.WARN}; border-radius: 4px; padding: 4px;"
    )
    label.setToolTip(STALE_TIP)
    label.hide()
    return label


class ResultRouter(QObject):
    """Hands the result shown to every view, the verdict label and the stale mark."""

    #: A result is now drawn in every view.
    shown = Signal(object)
    #: The result shown changed (shown or cleared): enabled-when rules depend on it.
    changed = Signal()

    def __init__(self, host: ResultHost, tabs: QTabWidget, verdict: QLabel, stale: QLabel) -> None:
        super().__init__(tabs)
        self._host = host
        self._tabs = tabs
        self._verdict = verdict
        self._stale = stale
        self._views: list[QWidget] = []
        #: The config the controls asked for when the run now shown started, and the one the
        #: stale mark compares the controls with (a run's, else the shown result's own).
        self._asked: ExperimentConfig | None = None
        self._shown: ExperimentConfig | None = None

    def add_view(self, widget: QWidget, title: str) -> None:
        """A tab whose widget gets `show_result(result)` and `clear()`."""
        for name in ("show_result", "clear"):
            if not callable(getattr(widget, name, None)):
                raise TypeError(f"a result view needs a {name}() method: {widget!r}")
        self._tabs.addTab(widget, title)
        self._views.append(widget)
        if self._host.last_result is not None:
            self._show_in(widget, self._host.last_result)

    def views(self) -> list[QWidget]:
        return list(self._views)

    def run_asked(self, config: ExperimentConfig) -> None:
        """The next result shown is a run the controls asked `config` of: its own config can
        differ by design (real data sets the model's input and classes), not stale."""
        self._asked = config

    def show(self, result: ExperimentResult) -> None:
        from autocast_explorer.core.experiment.summary import verdict

        self._host.result_path = None  # a new result has no file yet (opening sets its own)
        self._host.last_result = result
        self._shown, self._asked = self._asked or result.config, None
        for view in self._views:
            self._show_in(view, result)
        self._verdict.setText(verdict(result))
        self.mark_stale()
        self.changed.emit()
        self.shown.emit(result)

    def clear(self) -> None:
        self._host.last_result = None
        for view in self._views:
            cast("ResultView", view).clear()  # add_view checked it has clear()
        self._verdict.setText("")
        self.mark_stale()
        self.changed.emit()

    @Slot()
    def mark_stale(self) -> None:
        """Say so while the controls describe another config than the result shown."""
        result = self._host.last_result
        stale = False
        if result is not None:
            try:
                stale = self._host.current_config() != self._shown
            except ConfigError:
                stale = True  # the controls describe no valid config: not this result's
        self._stale.setText(
            f"Result is for {config_line(result.config)} — press Run (F5) to measure this one."
            if stale and result is not None
            else ""
        )
        self._stale.setVisible(stale)

    def _show_in(self, view: QWidget, result: ExperimentResult) -> None:
        try:
            cast("ResultView", view).show_result(result)  # add_view checked it has one
        except Exception as exc:  # one broken view must not take the window down
            log.exception("result view %r failed", view)
            name = view.objectName() or type(view).__name__
            self._host.show_banner(f"The view {name} failed: {exc}")
