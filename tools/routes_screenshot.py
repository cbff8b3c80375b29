"""`python -m tools.routes_screenshot [PATH]`: the Routes tab after a run of all three routes.

Used by `make screenshot-routes` under Xvfb (xcb), like tools/screenshot.py: runs the tutorial's
MLP with eager, compiled and implicit routes (compiling takes tens of seconds the first time)
and saves the window with the Routes tab in front. Every number is measured on the machine
that made it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import SETTLE_MS, first_start_window, measured, pause, save_png

CONFIG = ExperimentConfig(routes=("eager", "compiled", "implicit"), threads=1, min_time=0.3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="docs/routes.png")
    args = parser.parse_args(argv)
    out = Path(args.path)
    out.parent.mkdir(parents=True, exist_ok=True)
    app, window = first_start_window()
    window.show()
    try:
        if not measured(window, CONFIG):
            return 1
        window.context.show_view("routes")
        pause(SETTLE_MS)
        save_png(window, out)
        print(window.routesView.findingsLabel.text(), flush=True)
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
