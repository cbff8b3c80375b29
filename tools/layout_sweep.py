"""`python -m tools.layout_sweep [DIR]`: every result tab at three window sizes, with and without
the Lessons panel, at 100% and 150% text, and every lesson step at the three sizes and both
text scales.

The layout check behind `make screenshots`: one run of a GRU (so the dtype chart has a mixed
cell) is shown in one window, which is then resized, given the Lessons dock and a larger text
scale, and grabbed tab by tab. The PNGs go to DIR (default `out/screens`, ignored by git), named
`WxH-lessons|nolessons-100|150-tab.png`, `WxH-lesson-N.png` and `WxH-lesson-N-150.png` (each
lesson with the chart it names brought into view and framed, as after its run); look at them,
a clipped label is a bug. Run under Xvfb like every screenshot (the Makefile's
`screenshots` does).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.learning.lessons import LESSONS
from tools.screenshot import SETTLE_MS, first_start_window, measured, pause, save_png

SIZES = ((1024, 640), (1280, 800), (1920, 1080))
SCALES = (1.0, 1.5)
CONFIG = ExperimentConfig(
    model="rnn", cell="gru", features=32, hidden=64, seq=32, depth=2, batch=16, min_time=0.2
)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="out/screens")
    parser.add_argument("--sizes", nargs="*", default=[f"{w}x{h}" for w, h in SIZES])
    parser.add_argument("--no-lessons", action="store_true", help="skip the lesson steps")
    args = parser.parse_args(argv)
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes]
    app, window = first_start_window()
    window.show()
    try:
        if not measured(window, CONFIG):
            return 1
        tabs = window.resultTabs
        for width, height in sizes:
            for lessons in (False, True):
                if window.lessonsDock.isVisible() != lessons:
                    window.lessonsAction.trigger()
                for scale in SCALES:
                    window.presentation.set_font_scale(scale)
                    window.resize(width, height)
                    pause(SETTLE_MS)
                    for i in range(tabs.count()):
                        tabs.setCurrentIndex(i)
                        pause(SETTLE_MS // 2)
                        name = (
                            f"{width}x{height}-{'lessons' if lessons else 'nolessons'}-"
                            f"{round(scale * 100)}-{slug(tabs.tabText(i))}.png"
                        )
                        save_png(window, out / name)
            window.presentation.set_font_scale(1.0)
            if args.no_lessons:
                continue
            if not window.lessonsDock.isVisible():
                window.lessonsAction.trigger()
            panel = window.lessonsPanel
            for scale in SCALES:
                window.presentation.set_font_scale(scale)
                suffix = "" if scale == 1.0 else f"-{round(scale * 100)}"
                for step in range(len(LESSONS) + 1):  # the lessons, then the exercise
                    panel.go_to(step)
                    if step < len(LESSONS):  # as after its run: the chart it names, framed
                        panel.show_chart(LESSONS[step].chart)
                    pause(SETTLE_MS)
                    save_png(window, out / f"{width}x{height}-lesson-{step + 1}{suffix}.png")
            window.presentation.set_font_scale(1.0)
            window.lessonsAction.trigger()
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
