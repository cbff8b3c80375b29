"""`python -m tools.sweep_screenshot [DIR]`: the issue-4 tabs, measured live.

Drives a real window the way a person would: waits for torch, runs a batch sweep of the
default model (F6), times the placements (F7), then a small batch × width grid, and saves the
Sweeps, Placements, Hardware and grid views as PNGs in DIR (default docs/). Used by
`make screenshot-sweeps` under Xvfb; the numbers are whatever that machine measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Slot

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import SETTLE_MS, first_start_window, save_png

TIMEOUT_MS = 600_000


class SweepShooter(QObject):
    """A small state machine: sweep → placements → grid, grabbing a tab after each."""

    def __init__(self, window, directory: Path, args: argparse.Namespace) -> None:
        super().__init__(window)
        self.window = window
        self.dir = directory
        self.args = args
        self.code = 2
        self.install = window.sweeps
        window.engineReady.connect(self.start)
        self.install.sweeps.sweepFinished.connect(self.sweep_done)
        self.install.sweeps.sweepFailed.connect(self.failed)
        self.install.placements.placementsFinished.connect(self.placements_done)
        self.install.placements.placementsFailed.connect(self.failed)
        self.step = "sweep"
        self.deadline = QTimer(self)
        self.deadline.setSingleShot(True)
        self.deadline.timeout.connect(self.give_up)
        self.deadline.start(TIMEOUT_MS)

    def _later(self, slot) -> None:
        QTimer.singleShot(SETTLE_MS, slot)

    @Slot()
    def start(self) -> None:
        threads = self.args.threads or None
        self.window.set_config(ExperimentConfig(min_time=self.args.min_time, threads=threads))
        self.install.sweeps.set_sweep("batch", self.args.values)
        self.install.sweeps.start_sweep()

    @Slot(object)
    def sweep_done(self, result: object) -> None:
        print(result.crossover_sentence, "|", result.verdict.sentence, flush=True)
        # start_sweep() leaves the tabs as they are (F6 brings Sweeps forward): show it here.
        self.window.resultTabs.setCurrentWidget(self.install.sweeps)
        if self.step == "sweep":
            self._later(self.after_sweep)
        else:
            self._later(self.after_grid)

    @Slot()
    def after_sweep(self) -> None:
        self.grab("sweeps.png")
        self.install.placements.start_placements()

    @Slot(object)
    def placements_done(self, report: object) -> None:
        print(report.explanation, flush=True)
        self.window.resultTabs.setCurrentWidget(self.install.placements)
        self._later(self.after_placements)

    @Slot()
    def after_placements(self) -> None:
        self.grab("placements.png")
        self.window.resultTabs.setCurrentWidget(self.install.hardware)
        self._later(self.after_hardware)

    @Slot()
    def after_hardware(self) -> None:
        self.grab("hardware.png")
        if not self.args.grid:
            self.finish()
            return
        self.step = "grid"
        self.install.sweeps.set_sweep("grid", self.args.grid_batches, self.args.grid_widths)
        self.install.sweeps.start_sweep()

    @Slot()
    def after_grid(self) -> None:
        self.grab("sweep-grid.png")
        self.finish()

    @Slot(str)
    def failed(self, message: str) -> None:
        self.fail(message)

    @Slot()
    def give_up(self) -> None:
        self.fail(f"not done within {TIMEOUT_MS // 1000} s")

    def fail(self, message: str) -> None:
        print(f"error: {message}", file=sys.stderr, flush=True)
        self.code = 1
        self.window.close()

    def finish(self) -> None:
        self.code = 0
        self.deadline.stop()
        self.window.close()

    def grab(self, name: str) -> None:
        save_png(self.window, self.dir / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="docs")
    parser.add_argument("--values", default="1:1024:11", help="batch values of the sweep")
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per point")
    parser.add_argument("--grid-batches", default="1,4,16,64,256,1024")
    parser.add_argument("--grid-widths", default="128,512,2048")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--no-grid", dest="grid", action="store_false")
    args = parser.parse_args(argv)
    app, window = first_start_window()
    shooter = SweepShooter(window, Path(args.directory), args)
    window.show()
    app.exec()
    window.shutdown()
    return shooter.code


if __name__ == "__main__":
    sys.exit(main())
