"""`python -m autocast_explorer.gui.training_screenshot [PATH]`: the Training tab after a run.

Used by `make screenshot-training` under Xvfb (xcb), like tools/screenshot.py: trains the large
MLP (256→1024→1024→10, batch 256) for 60 steps in float32 and under autocast and saves the
window with the Training tab in front: both loss curves, the memory saved for backward and the
dtype tables. Every number in the picture is measured on the machine that made it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import shoot_view

CONFIG = ExperimentConfig(
    widths=(256, 1024, 1024, 10), batch=256, mode="train", steps=60, threads=1, min_time=0.3
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="docs/training.png")
    args = parser.parse_args(argv)
    return shoot_view(CONFIG, "training", Path(args.path), lambda w: w.trainingView.summary.text())


if __name__ == "__main__":
    sys.exit(main())
