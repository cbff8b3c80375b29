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
from tools.screenshot import shoot_view


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
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
    return shoot_view(
        config, "accuracy", Path(args.path), lambda w: w.accuracyView.accuracySummary.text()
    )


if __name__ == "__main__":
    sys.exit(main())
