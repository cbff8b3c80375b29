"""Sweeps in the window vs the CLI: does the window (drawing each point as it streams in, on a
worker QThread) measure what the CLI measures?

On a 2-core machine torch's two threads stall whenever another thread takes a core, and the
window draws every streamed point while the next one is timed (its progress is throttled to
5 Hz, gui.sweeps_tab.ThrottledProgress). The same sweep (default model, batch 1…1024, 11
points, 0.1 s per point) runs alternately from the CLI in a separate process (the window
idle) and in the window. (The CLI runs in its own process, not on this one's main thread: once
a main thread has run a torch parallel region, libgomp keeps its thread pool, and with more
OpenMP threads than cores every worker thread's forward slows down up to 4× at small sizes.
The window never runs torch on its main thread.)
Per run: points core flags as stalled (forward > 20× the calibrated estimate) and the sum over
points of the float32 and autocast medians (stalls inflate it), then the median per variant.

    xvfb-run -a -s "-screen 0 1280x800x24" env QT_QPA_PLATFORM=xcb \\
        .venv/bin/python bench/window_sweep.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from PySide6.QtCore import QObject, QTimer, Slot
from window_common import machine

VALUES = "1:1024:11"
MIN_TIME = 0.1
VARIANTS = ("CLI (own process)", "window")


def stalled(result) -> int:
    from autocast_explorer.core.experiment import guards
    from autocast_explorer.core.sweeps.runner import stalled_points

    plan = result.spec.plan(result.config)
    return len(
        stalled_points(result.points, [guards.estimate_forward_seconds(p.config) for p in plan])
    )


def cli_sweep():
    from autocast_explorer.core.sweeps.result import SweepResult

    command = [sys.executable, "-m", "autocast_explorer", "sweep", "--values", VALUES]
    command += ["--min-time", str(MIN_TIME), "--json", "-"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return SweepResult.from_json(out)


def total_ms(result) -> float:
    return sum(p.plain.median_ms + p.autocast.median_ms for p in result.points)


class Driver(QObject):
    def __init__(self, window, repeats: int) -> None:
        super().__init__(window)
        self.window = window
        self.plan = list(VARIANTS) * repeats
        self.results: list[tuple[str, object, float]] = []
        self.tab = window.sweeps.sweeps
        window.engineReady.connect(self.next)
        self.tab.sweepFinished.connect(self.done)
        self.tab.sweepFailed.connect(self.failed)

    def config(self):
        from autocast_explorer.core.experiment.config import ExperimentConfig

        return ExperimentConfig(min_time=MIN_TIME)

    @Slot()
    def next(self) -> None:
        if len(self.results) == len(self.plan):
            self.window.close()
            return
        variant = self.plan[len(self.results)]
        self.window.set_config(self.config())
        self.tab.set_sweep("batch", VALUES)
        self.window.resultTabs.setCurrentWidget(self.tab)
        self.started = time.perf_counter()
        if variant.startswith("CLI"):  # the event loop (and all drawing) waits meanwhile
            self.done(cli_sweep())
            return
        if not self.tab.start_sweep():
            raise SystemExit("could not start the sweep")

    @Slot(object)
    def done(self, result: object) -> None:
        variant = self.plan[len(self.results)]
        self.results.append((variant, result, time.perf_counter() - self.started))
        QTimer.singleShot(300, self.next)

    @Slot(str)
    def failed(self, message: str) -> None:
        raise SystemExit(f"sweep failed: {message}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from autocast_explorer.gui.window.app import create_application
    from autocast_explorer.gui.window.main_window import MainWindow

    print(f"machine: {machine()}; Qt platform {os.environ['QT_QPA_PLATFORM']}", flush=True)
    app = create_application(sys.argv[:1])
    window = MainWindow()
    window.resize(1280, 800)
    driver = Driver(window, args.repeats)
    window.show()
    app.exec()
    window.shutdown()
    for variant in VARIANTS:
        runs = [(r, wall) for v, r, wall in driver.results if v == variant]
        stalls = [stalled(r) for r, _w in runs]
        totals = [total_ms(r) for r, _w in runs]
        walls = [wall for _r, wall in runs]
        print(
            f"{variant:<20} stalled points per run {stalls}; sum of medians (ms) "
            f"{', '.join(f'{t:.1f}' for t in totals)} → median {statistics.median(totals):.1f}; "
            f"wall median {statistics.median(walls):.1f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
