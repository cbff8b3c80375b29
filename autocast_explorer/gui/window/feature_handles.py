"""The calls testers and scripts make through features' handles (`window.save_preset(…)`,
`window.compare_files(…)` …), each asking the context for the handle by its typed key.

Features publish their handles under keys they declare (`PRESETS = Handle("presets",
PresetBox)`); the window sets each as an attribute of the key's name for testers, but never
reads one back by name: its calls below, and the settings keeper, ask `context.handle(KEY)`,
so a type checker follows every call and a missing feature is named.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autocast_explorer.gui.features.presets.box import PRESETS

if TYPE_CHECKING:
    from autocast_explorer.core.learning.compare import ResultFileError
    from autocast_explorer.gui.features.compare.window import CompareWindow
    from autocast_explorer.gui.shell.context import AppContext


class FeatureHandles:
    """Mixed into MainWindow: the calls that go through features' handles. The tabs other than
    the first picture's are imported on first use (a progressive window builds them later)."""

    context: AppContext

    @property
    def compare_window(self) -> CompareWindow:
        """The Compare runs window (made on first use, not shown until asked)."""
        from autocast_explorer.gui.features.compare.window import COMPARE_RUNS

        return self.context.handle(COMPARE_RUNS).window()

    def compare_files(self, paths: list[str | Path]) -> list[ResultFileError]:
        """Show Compare with these result files (and this window's run); the errors."""
        from autocast_explorer.gui.features.compare.window import COMPARE_RUNS

        return self.context.handle(COMPARE_RUNS).compare_files([str(p) for p in paths])

    def export_report(self, directory: str | Path) -> Path | None:
        """Write the report of the result shown now into `directory`; report.md or None."""
        from autocast_explorer.gui.features.report.feature import REPORT_EXPORTER

        return self.context.handle(REPORT_EXPORTER).export_to(Path(directory))

    def save_preset(self, name: str, description: str = "", replace: bool = False) -> Path | None:
        """Save the current config as your preset `name`; its file, or None (message shown).

        Never asks: an existing preset of that name is replaced only with `replace=True`.
        """
        return self.context.handle(PRESETS).save_named(name, description, replace=replace)

    def save_sweep(self, path: str | Path) -> bool:
        """The last finished sweep as JSON (.json) or CSV (.csv); False if there is none."""
        from autocast_explorer.gui.features.sweeps.feature import SWEEPS

        sweeps = self.context.handle(SWEEPS)
        if Path(path).suffix.lower() == ".csv":
            return sweeps.save_sweep_csv(path)
        return sweeps.save_sweep_json(path)
