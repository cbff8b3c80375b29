"""Stability: many runs in one window; no crash, threads cleaned up, bounded memory growth.

The default experiment (tutorial model, batch 128, 0.5 s of timing per mode) runs `--runs`
times in one MainWindow, each started from the experimentFinished of the one before (as a
tester clicking Run again at once would). RSS is read after run 5 (allocator and caches
warm) and after the last; target: growth ≤ 20 MB over 50 runs. About a minute on 2 cores.

    .venv/bin/python bench/window_repeated_runs.py [--runs 50] [--min-time 0.5]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from PySide6.QtCore import QObject, QTimer, Slot
from window_common import machine, rss_mb

WARM_RUN = 5


class Repeater(QObject):
    def __init__(self, window, runs: int, min_time: float) -> None:
        super().__init__(window)
        self.window = window
        self.runs = runs
        self.min_time = min_time
        self.done = 0
        self.rss: dict[int, float] = {}
        self.threads_seen: list[int] = []
        self.error = ""
        window.engineReady.connect(self.first)
        window.experimentFinished.connect(self.finished)
        window.experimentFailed.connect(self.failed)

    @Slot()
    def first(self) -> None:
        from autocast_explorer.core.experiment.config import ExperimentConfig

        self.window.set_config(ExperimentConfig(min_time=self.min_time))
        self.rss[0] = rss_mb()
        self.start()

    def start(self) -> None:
        if not self.window.start_experiment():
            self.error = f"run {self.done + 1} was refused"
            self.window.close()

    @Slot(object)
    def finished(self, result: object) -> None:
        self.done += 1
        self.threads_seen.append(self.window.runner.live_threads())
        if self.done in (1, WARM_RUN, self.runs) or self.done % 10 == 0:
            gc.collect()
            self.rss[self.done] = rss_mb()
            print(f"after run {self.done}: RSS {self.rss[self.done]:.1f} MB", flush=True)
        if self.done < self.runs:
            self.start()  # at once, from the finished signal
        else:
            QTimer.singleShot(200, self.window.close)

    @Slot(str)
    def failed(self, message: str) -> None:
        self.error = message
        self.window.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--min-time", type=float, default=0.5)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from autocast_explorer.gui.window.app import create_application
    from autocast_explorer.gui.window.main_window import MainWindow

    print(f"machine: {machine()}; Qt platform {os.environ['QT_QPA_PLATFORM']}")
    app = create_application(sys.argv[:1])
    window = MainWindow()
    rep = Repeater(window, args.runs, args.min_time)
    window.show()
    code = app.exec()
    window.shutdown()
    left = window.runner.live_threads()
    if rep.error:
        print(f"error: {rep.error}")
        return 1
    growth = rep.rss[args.runs] - rep.rss[WARM_RUN]
    print(
        f"{rep.done} runs, event loop exit {code}, worker threads left {left}, most threads "
        f"alive at a finished signal {max(rep.threads_seen)}; RSS {rep.rss[0]:.1f} MB before "
        f"the first run, {rep.rss[WARM_RUN]:.1f} MB after run {WARM_RUN}, "
        f"{rep.rss[args.runs]:.1f} MB after run {args.runs}: growth {growth:+.1f} MB "
        f"(target ≤ 20 MB: {'met' if growth <= 20 else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
