"""`python -m tools.accuracy_screenshot [PATH]`: the Accuracy tab after a run on the digits.

Used by `make screenshot-accuracy` under Xvfb (xcb), like tools/screenshot.py: trains the CNN
(1→32→64 channels on the 8×8 digits) in float32, answers the held-out digits in float32 and
under autocast, and saves the window with the Accuracy tab in front: both accuracies, the
interval, the flipped digits and the confusion of the flips. Everything is measured on the
machine that made it; how many digits flip depends on its CPU and torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import SETTLE_MS, first_start_window, measured, pause, save_png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="docs/accuracy.png")
    parser.add_argument("--model", default="cnn", choices=("mlp", "cnn"))
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=ExperimentConfig().epochs)
    args = parser.parse_args(argv)
    config = ExperimentConfig(
        model=args.model,
        data="digits",
        dtype=args.dtype,
        seed=args.seed,
        epochs=args.epochs,
        threads=1,
        min_time=0.2,
    )
    out = Path(args.path)
    out.parent.mkdir(parents=True, exist_ok=True)
    app, window = first_start_window()
    window.show()
    try:
        if not measured(window, config):
            return 1
        window.context.show_view("accuracy")
        pause(SETTLE_MS)
        save_png(window, out)
        print(window.accuracyView.accuracySummary.text(), flush=True)
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
