"""`python -m tools.plan_screenshot [DIR]`: the Plan tab with a plan shown, at the sizes and text
scales a layout must survive.

By default the tab runs its own search (Find plan) for the tutorial's MLP with the criterion
and budget given, so every number is measured on the machine that made it. `--example` shows
a plan made up here instead (every outcome's words, a model with long layer names) for
checking the layout without waiting for a search; its numbers are not measurements and its
pictures are not for the docs. Each size is saved twice: the window (`WxH-S-window.png`) and
the whole Plan page, scrolled part included (`WxH-S-page.png`). Run under Xvfb (xcb), like
tools/screenshot.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from tools.screenshot import SETTLE_MS, first_start_window, pause, save_png, wait_for

SHOTS = ((1024, 640, 1.5, True), (1024, 640, 1.5, False), (1920, 1080, 1.0, False))
#: A plan search may take its budget and a compile or two more.
SEARCH_TIMEOUT_MS = 900_000


def example_plan(config: ExperimentConfig, outcome: str):  # type: ignore[no-untyped-def]
    """A made-up plan with `outcome` for `config`: long names, a dozen rows, every column."""
    from autocast_explorer.core.hardware.cpu import environment
    from autocast_explorer.core.planning.document import (
        PlanCandidate,
        PlanChoice,
        PlanDocument,
        SensitivityRow,
        SpeedupInterval,
    )

    names = [f"encoder.layers.{i}.{part}" for i in range(3) for part in ("self_attn", "linear1")]
    names += ["encoder.layers.2.norm2", "embedding", "classifier", "pooler.dense"]
    rows = tuple(
        SensitivityRow(
            name=name,
            one_in=99.95 - (3.1 if "norm" in name else 0.07 * i),
            leave_out=99.4 + 0.05 * i,
            time_share_plain=0.02 + 0.01 * (i % 5),
            time_share_lower=0.03 + 0.01 * (i % 4),
        )
        for i, name in enumerate(names)
    )

    def speedup(low: float, high: float) -> SpeedupInterval:
        return SpeedupInterval(low=low, high=high, estimate=(low * high) ** 0.5)

    def tried(route, dtype, threads, keep, low, high, value, met, why=""):  # type: ignore[no-untyped-def]
        return PlanCandidate(
            route=route,
            dtype=dtype,
            threads=threads,
            keep_float32=keep,
            speedup_interval=speedup(low, high),
            criterion_value=value,
            met=met and outcome != "none",
            why_not=why if met and outcome != "none" else why or "missed the criterion",
        )

    # "float32": compiled bfloat16 no faster than compiled float32 (the intervals overlap).
    best, why = (
        ((2.1, 2.6), "no faster than compiled float32")
        if outcome == "float32"
        else ((2.7, 3.1), "")
    )
    beaten = "" if outcome == "float32" else "slower than the plan"
    candidates = (
        tried("eager", "float32", 1, (), 1.0, 1.0, 100.0, True, "the reference"),
        tried("compiled", "float32", 4, (), 2.3, 2.6, 100.0, True, beaten),
        tried("eager", "bfloat16", 4, (), 0.12, 0.16, 96.8, False, "agree 96.80% < 99.5%"),
        tried("implicit", "bfloat16", 4, (), 0.98, 1.03, 99.9, True, "no faster than float32"),
        tried("compiled", "bfloat16", 4, ("encoder.layers.2.norm2",), *best, 99.8, True, why),
    )
    chosen = {"plan": candidates[4], "float32": candidates[1], "none": candidates[2]}[outcome]
    return PlanDocument(
        config=config,
        environment=environment(),
        outcome=outcome,
        criterion="agree>=99.5%",
        chosen=PlanChoice(**chosen.model_dump(exclude={"met", "why_not"})),
        candidates=candidates,
        sensitivity=rows,
        first_divergent="encoder.layers.2.norm2",
        snippet=(
            "import torch\n\n"
            "model.encoder.layers[2].norm2 = keep_float32(model.encoder.layers[2].norm2)\n"
            "model = torch.compile(model)\n"
            "with torch.inference_mode(), torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    logits = model(batch)\n"
        ),
        budget_s=60.0,
        spent_s=52.4,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="out/plan")
    parser.add_argument("--example", choices=("plan", "float32", "none"), default=None)
    parser.add_argument("--criterion", default="agree>=99.5%")
    parser.add_argument("--budget", type=int, default=60)
    args = parser.parse_args(argv)
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    app, window = first_start_window()
    window.show()
    try:
        if not window.engine_ready() and wait_for(window.engineReady) is None:
            print("error: PyTorch did not load", file=sys.stderr)
            return 1
        view = window.planView
        window.context.show_view("plan")
        if args.example:
            view.show_plan(example_plan(window.current_config(), args.example))
        else:
            view.criterionEdit.setText(args.criterion)
            view.budgetSpin.setValue(args.budget)
            if not view.start_plan():
                print(f"error: not started: {view.runButton.toolTip()}", file=sys.stderr)
                return 1
            got = wait_for(view.planFinished, view.planFailed, timeout_ms=SEARCH_TIMEOUT_MS)
            if not got or isinstance(got[0], str):
                print(f"error: the search failed: {got}", file=sys.stderr)
                return 1
        print(view.outcomeLabel.text(), flush=True)
        for width, height, scale, lessons in SHOTS:
            if window.lessonsDock.isVisible() != lessons:
                window.lessonsAction.trigger()
            window.presentation.set_font_scale(scale)
            window.resize(width, height)
            pause(SETTLE_MS)
            name = f"{width}x{height}-{round(scale * 100)}{'-lessons' if lessons else ''}"
            save_png(window, out / f"{name}-window.png")
            # The page itself (not through save_png: winId() would make it a native window),
            # twice: a part never on screen lays its axes out at its first paint.
            view.grab()
            pause(SETTLE_MS // 2)
            view.grab().save(str(out / f"{name}-page.png"), "PNG")
        return 0
    finally:
        window.close()
        window.shutdown()
        app.processEvents()


if __name__ == "__main__":
    sys.exit(main())
