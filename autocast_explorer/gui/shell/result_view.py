"""ResultView: what a view that draws a result offers whoever holds a list of them.

The Overview's header and charts, and the window's views, are QWidgets that also draw an
ExperimentResult; the list they sit in is typed by this, not by QWidget, which has neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult


class ResultView(Protocol):
    def show_result(self, result: ExperimentResult) -> None: ...
    def clear(self) -> None: ...
