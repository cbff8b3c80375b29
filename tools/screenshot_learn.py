"""`python -m tools.screenshot_learn SCENE PATH`: the lessons and Compare pictures (docs/window.md).

Scenes (each measured live on the machine that makes the picture, at 1280×800):
- `lessons`: the projector theme, controls hidden, the Lessons panel after running lesson 2.
- `compare`: the Compare window with two real runs of the tutorial's model, 1 thread and all
  threads, saved to JSON and loaded back the way a colleague's file would be.

`make screenshots-learn` runs both under Xvfb with the xcb platform, like `make screenshot`.
Settings go to a temporary file, so the pictures never depend on (or change) yours.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from autocast_explorer.core.documents.files import write_atomic
from tools import screenshot
from tools.screenshot import (
    HEIGHT,
    TIMEOUT_MS,
    WIDTH,
    first_start_window,
    pause,
    save_png,
)

#: Time for the window to repaint before a grab (a little longer than screenshot.py's).
SETTLE_MS = 600


def wait_for(signal) -> tuple:
    """`signal`'s arguments once it fires; TimeoutError after screenshot.py's TIMEOUT_MS."""
    got = screenshot.wait_for(signal)
    if got is None:
        raise TimeoutError(f"no {signal} within {TIMEOUT_MS // 1000} s")
    return got


def lessons_scene(window, path: str) -> None:
    window.presentation.set_theme("projector")
    window.presentation.set_controls_hidden(True)
    window.lessonsAction.trigger()
    panel = window.lessonsPanel
    panel.go_to(1)  # "Autocast runs the Linear layers in bfloat16"
    if not panel.run_step():
        raise RuntimeError(panel.outcomeHeadline.text())
    (outcome,) = wait_for(panel.stepFinished)
    print(outcome.headline, flush=True)
    pause(SETTLE_MS)
    save_png(window, path)


def compare_scene(window, path: str) -> None:
    from autocast_explorer.core.experiment.config import ExperimentConfig

    folder = Path(tempfile.mkdtemp(prefix="autocast-compare-"))
    files = []
    for threads in (1, os.cpu_count() or 1):
        # A longer budget than the default: steadier medians for a picture.
        window.set_config(ExperimentConfig(threads=threads, min_time=1.5))
        if not window.start_experiment():
            raise RuntimeError("could not start a run")
        (result,) = wait_for(window.experimentFinished)
        target = folder / f"tutorial-{threads}-threads.json"
        write_atomic(target, result.to_json())
        files.append(str(target))
    compare = window.compare_window
    compare.resize(WIDTH, HEIGHT)
    compare.move(0, 0)
    compare.show()
    errors = compare.add_files(files)
    if errors:
        raise RuntimeError("; ".join(map(str, errors)))
    pause(SETTLE_MS)
    save_png(compare, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("scene", choices=("lessons", "compare"))
    parser.add_argument("path")
    args = parser.parse_args(argv)
    app, window = first_start_window()
    window.show()
    code = 0
    try:
        wait_for(window.engineReady)
        (lessons_scene if args.scene == "lessons" else compare_scene)(window, args.path)
    except (TimeoutError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        code = 1
    window.close()
    window.shutdown()
    app.processEvents()
    return code


if __name__ == "__main__":
    sys.exit(main())
