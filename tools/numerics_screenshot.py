"""`python -m tools.numerics_screenshot [DIR]`: pictures of the numerics tabs.

Used by `make screenshot-numerics` under Xvfb (xcb), like gui/screenshot.py: runs one
experiment big enough for a few predictions to flip (256,256,256,100, batch 1024), saves the
Layer error, Agreement and Op trace tabs, then runs the op-policy probe and saves the Ops tab.
Every number in the pictures is measured on the machine that made them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import (
    SETTLE_MS,
    first_start_window,
    measured,
    pause,
    save_png,
    show_tab,
    wait_for,
)

CONFIG = ExperimentConfig(widths=(256, 256, 256, 100), batch=1024, min_time=0.3)
#: (tab title, file name) for the result views.
VIEWS = (
    ("Layer error", "numerics.png"),
    ("Agreement", "agreement.png"),
    ("Op trace", "optrace.png"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="docs")
    args = parser.parse_args(argv)
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    app, window = first_start_window()
    window.show()
    try:
        if not measured(window, CONFIG):
            return 1
        print(window.verdictLabel.text(), flush=True)
        for title, name in VIEWS:
            show_tab(window, title)
            save_png(window, out / name)
        show_tab(window, "Ops")
        if not window.opsPanel.start_probe():
            print("error: could not start the probe", file=sys.stderr)
            return 1
        got = wait_for(window.opsPanel.probeFinished, window.opsPanel.probeFailed)
        if not got or isinstance(got[0], str):
            print(f"error: the probe failed: {got}", file=sys.stderr)
            return 1
        pause(SETTLE_MS)
        save_png(window, out / "ops.png")
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
