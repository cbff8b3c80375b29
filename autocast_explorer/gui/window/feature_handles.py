"""The feature handles the window calls, declared with their types, and the calls testers and
scripts make through them (`window.save_preset(…)`, `window.compare_files(…)` …).

Features publish their handles by name (`install(ctx)` returns them; the window sets each as an
attribute for testers). The window never looks one up by that name: the ones its own code
and its settings use are declared here, so a type checker follows every call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.learning.compare import ResultFileError
    from autocast_explorer.gui.features.compare.window import CompareRuns, CompareWindow
    from autocast_explorer.gui.features.lessons.panel import LessonsPanel
    from autocast_explorer.gui.features.presentation.mode import Presentation
    from autocast_explorer.gui.features.presets.box import PresetBox
    from autocast_explorer.gui.features.report.feature import ReportExporter
    from autocast_explorer.gui.features.sweeps.feature import SweepsHandle


class FeatureHandles:
    """Mixed into MainWindow: the typed handles and the calls that go through them."""

    presets: PresetBox
    presentation: Presentation
    lessonsPanel: LessonsPanel
    sweeps: SweepsHandle
    compareRuns: CompareRuns
    reportExporter: ReportExporter

    @property
    def compare_window(self) -> CompareWindow:
        """The Compare runs window (made on first use, not shown until asked)."""
        return self.compareRuns.window()

    def compare_files(self, paths: list[str | Path]) -> list[ResultFileError]:
        """Show Compare with these result files (and this window's run); the errors."""
        return self.compareRuns.compare_files([str(p) for p in paths])

    def export_report(self, directory: str | Path) -> Path | None:
        """Write the report of the result shown now into `directory`; report.md or None."""
        return self.reportExporter.export_to(Path(directory))

    def save_preset(self, name: str, description: str = "", replace: bool = False) -> Path | None:
        """Save the current config as your preset `name`; its file, or None (message shown).

        Never asks: an existing preset of that name is replaced only with `replace=True`.
        """
        return self.presets.save_named(name, description, replace=replace)

    def save_sweep(self, path: str | Path) -> bool:
        """The last finished sweep as JSON (.json) or CSV (.csv); False if there is none."""
        if Path(path).suffix.lower() == ".csv":
            return self.sweeps.save_sweep_csv(path)
        return self.sweeps.save_sweep_json(path)
