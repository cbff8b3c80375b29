"""`python -m tools.user_model_screenshot [DIR]`: the window with your own model.

Runs `hf:resnet` (transformers' default ResNet config, a ResNet-50: ≈ 170 modules, random
weights, built offline) at 64×64 through the window's "Your model…" controls and saves the
Overview and Layers tabs; under Xvfb at 1280×800 like every screenshot (`make screenshot`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import first_start_window, measured, save_png, show_tab

CONFIG = ExperimentConfig(model="hf:resnet", input_image=64, batch=2, min_time=0.3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="docs")
    args = parser.parse_args(argv)
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    app, window = first_start_window()
    window.show()
    window.confirm_model_file = lambda _path: True
    try:
        if not measured(window, CONFIG):
            return 1
        print(window.verdictLabel.text(), flush=True)
        for title, name in (("Overview", "user-model.png"), ("Layers", "user-model-layers.png")):
            show_tab(window, title)
            save_png(window, out / name)
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
