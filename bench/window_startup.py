"""Start-up: time to the window's first paint vs `python -c "import torch"`, side by side.

Each round runs both, in alternating order, as fresh processes timed from spawn: the window
through its real entry point (cli.main with no subcommand → run_app), reporting its first
paint, the moment Run is enabled (torch imported: `torchLoaded`, the Run button checked
enabled) and the engine ready (`engineReady`); torch as a bare import. The figures are the
medians over rounds of paint/torch (target ≤ 0.6) and Run enabled/torch (target ≤ 1.2).

The package's bytecode is compiled first, as `make run` does (and as Python does on a first
run unless PYTHONDONTWRITEBYTECODE is set): torch's was compiled when pip installed it, so both
sides load bytecode.

    .venv/bin/python bench/window_startup.py [--rounds 9] [--platform offscreen|xcb]
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import time

from window_common import ROOT, machine, percentiles

PROBE = r"""
import sys, time
from PySide6.QtCore import Slot
import autocast_explorer.gui.window.app  # before the window's modules, as cli.main imports them
import autocast_explorer.gui.window.main_window as mw

class Probe(mw.MainWindow):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.firstPainted.connect(self._probe_paint)
        self.torchLoaded.connect(self._probe_run)
        self.engineReady.connect(self._probe_ready)

    @Slot()
    def _probe_paint(self):
        print("first-paint", flush=True)

    @Slot()
    def _probe_run(self):
        if self.runButton.isEnabled():
            print("run-enabled", flush=True)

    @Slot()
    def _probe_ready(self):
        print("ready", flush=True)
        self.close()

mw.MainWindow = Probe
from autocast_explorer.cli import main
sys.exit(main([]))
"""


def time_window(env: dict[str, str]) -> tuple[float, float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    marks: dict[str, float] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        marks[line.strip()] = time.perf_counter() - start
    if proc.wait() != 0 or set(marks) != {"first-paint", "run-enabled", "ready"}:
        raise SystemExit(f"window probe failed (exit {proc.returncode}, saw {sorted(marks)})")
    return marks["first-paint"], marks["run-enabled"], marks["ready"]


def time_torch(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    args = parser.parse_args()
    env = {**os.environ, "QT_QPA_PLATFORM": args.platform}
    print(f"machine: {machine()}; Qt platform {args.platform}; {args.rounds} rounds")
    if not compileall.compile_dir(ROOT / "autocast_explorer", quiet=1):
        raise SystemExit("could not compile the package's bytecode (as make run does)")
    time_torch(env)  # one unrecorded round each, so both start from a warm page cache
    time_window(env)
    rows: list[tuple[float, float, float, float]] = []  # paint, Run enabled, ready, torch
    for i in range(args.rounds):
        if i % 2 == 0:
            torch_s = time_torch(env)
            marks = time_window(env)
        else:
            marks = time_window(env)
            torch_s = time_torch(env)
        rows.append((*marks, torch_s))
        paint_s, run_s, ready_s = marks
        print(
            f"round {i + 1}: first paint {paint_s:.3f} s, Run enabled {run_s:.3f} s, "
            f"engine ready {ready_s:.3f} s, import torch {torch_s:.3f} s, "
            f"paint/torch {paint_s / torch_s:.2f}, Run/torch {run_s / torch_s:.2f}"
        )
    med = lambda xs: percentiles(list(xs), (50,))[0]  # noqa: E731
    paint_ratios = [paint / torch_s for paint, _run, _ready, torch_s in rows]
    run_ratios = [run / torch_s for _paint, run, _ready, torch_s in rows]
    paint_ratio, run_ratio = med(paint_ratios), med(run_ratios)
    print(
        f"median: first paint {med(r[0] for r in rows):.3f} s · Run enabled "
        f"{med(r[1] for r in rows):.3f} s · engine ready {med(r[2] for r in rows):.3f} s · "
        f"import torch {med(r[3] for r in rows):.3f} s"
    )
    print(
        f"paint/torch {paint_ratio:.2f} (min {min(paint_ratios):.2f}, max "
        f"{max(paint_ratios):.2f}) · target ≤ 0.60: {'met' if paint_ratio <= 0.6 else 'MISSED'}"
    )
    print(
        f"Run enabled/torch {run_ratio:.2f} (min {min(run_ratios):.2f}, max "
        f"{max(run_ratios):.2f}) · target ≤ 1.20: {'met' if run_ratio <= 1.2 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
