"""The window's files: open and save the result shown, its latency CSV, and every chart export.

Each entry has two halves: the menu's (a dialog, then the same call) and the one tests and
scripts call with a path. Writing is atomic and runs on the GUI thread, so a FIFO or device
that takes nothing for a second is given up; the status bar says what was saved, the banner
why not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QLabel, QMenu, QStatusBar, QWidget

if TYPE_CHECKING:
    import pyqtgraph as pg

    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.gui.shell.actions import ActionRegistry

#: A FIFO that takes nothing for this long is given up (a save runs on the GUI thread).
GUI_STREAM_STALL_SECONDS = 1.0


class FileHost(Protocol):
    """What the files need of the window: the result shown, its file, the messages."""

    last_result: ExperimentResult | None
    result_path: Path | None

    @property
    def messageBanner(self) -> QLabel: ...

    def show_result(self, result: ExperimentResult) -> None: ...
    def show_banner(self, text: str) -> None: ...
    def statusBar(self) -> QStatusBar: ...


class WindowFiles:
    """File › Open, Save, Save As, Export latency CSV and Export chart, for one window."""

    def __init__(
        self,
        host: FileHost,
        parent: QWidget,
        actions: ActionRegistry,
        chart: Callable[[str], pg.PlotWidget | None],
    ) -> None:
        self._host = host
        self._parent = parent
        self._actions = actions
        self._chart = chart
        #: File › Export chart, filled by add_chart_export (made with the File menu).
        self.export_menu: QMenu | None = None
        #: Every File › Export chart entry, by chart key (the window's `exportActions`).
        self.export_actions: dict[str, QAction] = {}

    # ---- with a path (tests and scripts) ------------------------------------------------------
    def write(self, path: str | Path, data: str | bytes, what: str) -> bool:
        """Write atomically; the status bar says so, or the banner says why not (False)."""
        from autocast_explorer.core.documents.files import write_atomic
        from autocast_explorer.core.documents.reader import cap_text, clean_text

        shown = cap_text(clean_text(str(path)), 200)  # a NUL or newline in it stays out
        try:
            write_atomic(path, data, stall_s=GUI_STREAM_STALL_SECONDS)
        except OSError as exc:
            self._host.show_banner(f"Could not save {what} to {shown}: {exc.strerror or exc}")
            return False
        self._host.statusBar().showMessage(f"Saved {what} to {shown}", 5000)
        return True

    def save_result(self, path: str | Path) -> bool:
        result = self._host.last_result
        if result is None:
            return False
        if Path(path).suffix.lower() == ".csv":
            return self.write(path, result.to_csv(), "the latency CSV")
        saved = self.write(path, result.to_json(), "the result")
        if saved:
            self._host.result_path = Path(path)
        return saved

    def open_result(self, path: str | Path) -> bool:
        # Size-limited, strict JSON: ResultFileError names the file and the problem.
        from autocast_explorer.core.learning.compare import ResultFileError, load_result_file

        try:
            result = load_result_file(path)
        except ResultFileError as exc:
            self._host.show_banner(f"Could not open {exc}")
            return False
        self._host.messageBanner.hide()
        self._host.show_result(result)
        self._host.result_path = Path(path)
        self._host.statusBar().showMessage(f"Showing {path}", 5000)
        return True

    def export_chart(self, key: str, path: str | Path) -> bool:
        from autocast_explorer.gui.charts.export import chart_bytes

        plot = self._chart(key)
        if plot is None:
            self._host.show_banner(f"There is no chart {key!r} to export.")
            return False
        try:
            data = chart_bytes(plot, Path(path).suffix.lower())
        except (OSError, ValueError) as exc:
            self._host.show_banner(f"Could not export the chart: {exc}")
            return False
        return self.write(path, data, "the chart")

    def add_chart_export(
        self,
        key: str,
        title: str,
        enabled_when: Callable[[], bool] | None = None,
        *,
        new_section: bool = False,
    ) -> QAction:
        if new_section and self.export_menu is not None:
            self.export_menu.addSeparator()
        action = self._actions.add(
            title,
            functools.partial(self._export, key),
            menu=self.export_menu,
            name=f"export_{key}",
            enabled_when=enabled_when,
        )
        self.export_actions[key] = action
        return action

    # ---- with a dialog (the menus) ------------------------------------------------------------
    def _ask_save_path(self, title: str, name: str, filters: str) -> tuple[str, str]:
        return QFileDialog.getSaveFileName(self._parent, title, str(Path.cwd() / name), filters)

    @Slot()
    def save(self) -> None:
        """File › Save: the result's own file when it has one (opened or saved), else Save As."""
        if self._host.last_result is None:
            return
        if self._host.result_path is None:
            self.save_as()
        else:
            self.save_result(self._host.result_path)

    @Slot()
    def save_as(self) -> None:
        if self._host.last_result is None:
            return
        known = self._host.result_path
        name = known.name if known else "autocast-result.json"
        path, _ = self._ask_save_path("Save result as JSON", name, "JSON (*.json)")
        if path:
            self.save_result(path)

    @Slot()
    def save_csv(self) -> None:
        result = self._host.last_result
        if result is None:
            return
        path, _ = self._ask_save_path("Export latency CSV", "autocast-latency.csv", "CSV (*.csv)")
        if path:
            self.write(path, result.to_csv(), "the latency CSV")

    @Slot()
    def open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self._parent, "Open result", str(Path.cwd()), "JSON (*.json)"
        )
        if path:
            self.open_result(path)

    def _export(self, key: str, *_checked: object) -> None:
        from autocast_explorer.gui.charts.export import FORMATS

        path, chosen = self._ask_save_path(
            "Export chart", f"autocast-{key.replace('_', '-')}.png", ";;".join(FORMATS.values())
        )
        if not path:
            return
        if Path(path).suffix.lower() not in FORMATS:
            path += ".svg" if "svg" in chosen.lower() else ".png"
        self.export_chart(key, path)
