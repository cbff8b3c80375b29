"""`python -m tools.families_screenshot [DIR]`: the window with other models.

Runs a CNN and a transformer (fast path off, four encoder layers: dozens of recorded modules)
through the window's own controls and saves the Overview tab of each, plus the transformer's
Layer error tab; under Xvfb at 1280×800 like every screenshot (`make screenshot`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import first_start_window, measured, save_png, show_tab

SHOTS = (
    (
        ExperimentConfig(model="cnn", batch=64, min_time=0.3),
        (("Overview", "cnn.png"),),
    ),
    (
        ExperimentConfig(model="transformer", depth=4, fast_path=False, batch=16, min_time=0.3),
        (("Overview", "transformer.png"), ("Layer error", "transformer-error.png")),
    ),
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
        for config, views in SHOTS:
            if not measured(window, config):
                return 1
            print(window.verdictLabel.text(), flush=True)
            for title, name in views:
                show_tab(window, title)
                save_png(window, out / name)
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
