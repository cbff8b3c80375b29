"""`python -m tools.screenshot PATH`: run the default experiment, save the window.

Used by `make screenshot` under Xvfb with the xcb platform, so the picture in the README is a
real X11 window at 1280×800 showing numbers measured on the machine that made it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QEventLoop, QIODevice, QObject, QTimer, Slot
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from autocast_explorer.core.documents.files import write_atomic
from autocast_explorer.gui.window.app import create_application

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.gui.window.main_window import MainWindow

WIDTH, HEIGHT = 1280, 800
#: Give up (exit 2) if loading torch and running the default experiment take longer.
TIMEOUT_MS = 300_000
#: Time for the charts to repaint after the result arrives.
SETTLE_MS = 500


class Shooter(QObject):
    """Drives the window: run once torch is loaded, grab once the result is drawn."""

    def __init__(self, window, path: str) -> None:
        super().__init__(window)
        self.window = window
        self.path = path
        self.code = 2
        window.engineReady.connect(self.run)
        window.experimentFinished.connect(self.finished)
        window.experimentFailed.connect(self.failed)
        self.settle = QTimer(self)
        self.settle.setSingleShot(True)
        self.settle.timeout.connect(self.grab)
        self.deadline = QTimer(self)
        self.deadline.setSingleShot(True)
        self.deadline.timeout.connect(self.give_up)
        self.deadline.start(TIMEOUT_MS)

    @Slot()
    def run(self) -> None:
        if not self.window.start_experiment():
            self.fail("could not start the default experiment")

    @Slot(object)
    def finished(self, result: object) -> None:
        print(self.window.verdictLabel.text(), flush=True)
        for warning in getattr(result, "warnings", ()):
            print(f"warning: {warning}", flush=True)
        self.settle.start(SETTLE_MS)

    @Slot(str)
    def failed(self, message: str) -> None:
        self.fail(message)

    @Slot()
    def give_up(self) -> None:
        self.fail(f"no result within {TIMEOUT_MS // 1000} s")

    def fail(self, message: str) -> None:
        print(f"error: {message}", file=sys.stderr, flush=True)
        self.code = 1
        self.window.close()

    @Slot()
    def grab(self) -> None:
        save_png(self.window, self.path)
        self.code = 0
        self.deadline.stop()
        self.window.close()


def save_png(widget: QWidget, path: Path | str) -> None:
    """Write what `widget` shows to `path` as PNG; every screenshot script saves through this."""
    # From the display server when there is one (what a person would see), else render.
    screen = widget.screen() or QGuiApplication.primaryScreen()
    pixmap: QPixmap = screen.grabWindow(widget.winId()) if screen else QPixmap()
    if pixmap.isNull() or pixmap.width() < WIDTH // 2:
        pixmap = widget.grab()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    pixmap.save(buffer, "PNG")
    write_atomic(path, bytes(buffer.data().data()))
    print(f"saved {path} ({pixmap.width()}×{pixmap.height()})", flush=True)


def wait_for(*signals, timeout_ms: int = TIMEOUT_MS) -> tuple | None:
    """Run the event loop until one of `signals` fires; its arguments (a tuple, () for a signal
    without any), or None after `timeout_ms`: compare with None, not truthiness."""
    loop = QEventLoop()
    got: list[tuple] = []
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)

    def done(*args: object) -> None:
        got.append(args)
        loop.quit()

    for signal in signals:
        signal.connect(done)
    timer.start(timeout_ms)
    loop.exec()
    timer.stop()
    for signal in signals:
        signal.disconnect(done)
    return got[0] if got else None


def pause(ms: int) -> None:
    """Run the event loop for `ms` (time for the charts to repaint)."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def first_start_window() -> tuple[QApplication, MainWindow]:
    """The application and a WIDTH×HEIGHT window as on a first start.

    Settings go to a temporary file, so a picture never shows (or changes) this user's saved
    config, theme or layout.
    """
    settings = Path(tempfile.mkdtemp(prefix="autocast-settings-")) / "settings.ini"
    os.environ["AUTOCAST_EXPLORER_SETTINGS"] = str(settings)
    app = create_application(sys.argv[:1])
    from autocast_explorer.gui.window.main_window import MainWindow

    window = MainWindow()
    window.resize(WIDTH, HEIGHT)
    window.move(0, 0)
    return app, window


def measured(window: MainWindow, config: ExperimentConfig) -> bool:
    """Load the engine if needed, run `config` and wait for it; False (said on stderr) if not."""
    if not window.engine_ready() and wait_for(window.engineReady) is None:
        print("error: PyTorch did not load", file=sys.stderr)
        return False
    window.set_config(config)
    if not window.start_experiment():
        print(f"error: could not start: {window.input_errors()}", file=sys.stderr)
        return False
    got = wait_for(window.experimentFinished, window.experimentFailed)
    if not got or isinstance(got[0], str):
        print(f"error: the run failed: {got}", file=sys.stderr)
        return False
    return True


def shoot_view(
    config: ExperimentConfig, view_id: str, out: Path, caption: Callable[[MainWindow], str]
) -> int:
    """Run `config` in a first-start window, bring view `view_id` to the front, save the window
    to `out` and print `caption(window)`; 1 when the run did not finish."""
    out.parent.mkdir(parents=True, exist_ok=True)
    app, window = first_start_window()
    window.show()
    try:
        if not measured(window, config):
            return 1
        window.context.show_view(view_id)
        pause(SETTLE_MS)
        save_png(window, out)
        print(caption(window), flush=True)
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


def show_tab(window: MainWindow, title: str) -> None:
    """Bring the result tab titled `title` to the front and let it repaint."""
    tabs = window.resultTabs
    for i in range(tabs.count()):
        if tabs.tabText(i) == title:
            tabs.setCurrentIndex(i)
            pause(SETTLE_MS)
            return
    raise SystemExit(f"error: no tab {title!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="docs/screenshot.png")
    args = parser.parse_args(argv)
    app, window = first_start_window()
    shooter = Shooter(window, args.path)
    window.show()
    app.exec()
    window.shutdown()
    return shooter.code


if __name__ == "__main__":
    sys.exit(main())
