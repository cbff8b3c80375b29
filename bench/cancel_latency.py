"""How long Cancel takes to stop a run, per phase and time budget, against one forward's time.

For each preset model and each budget, a run is started on a thread; when its progress first
reports the phase (cold calls, capture, trace, warm-up, timing) a short fixed delay later the
cancel flag is set, and the time from the flag to `Cancelled` reaching the caller is measured.
The promise (docs/window.md): about 0.1 s plus one forward at any budget. Exit 1 if a case
exceeds 0.1 s + 2 × its slowest measured forward (margin for a noisy machine).

Usage: python bench/cancel_latency.py [--budgets 1 20] [--presets tutorial gru large-mlp]
       python bench/cancel_latency.py --smoke   (two cases, tiny budget: shows it works)
Run it on a quiet machine; figures from a busy one are meaningless.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.learning.presets import builtin_presets
from autocast_explorer.core.runtime.progress import Cancelled

#: Progress messages that open each phase (core.engine / core.timing).
PHASES = {
    "capture": "capturing dtypes",
    "trace": "tracing the aten ops",
    "warm-up": "warming up",
    "timing": "timing",
}
DELAY_S = 0.05  # into the phase before the cancel
SLACK_S = 0.1


def forward_ms(config) -> float:
    """The slowest of a few plain and autocast forwards (the 'one forward' of the promise)."""
    model, x = build(config)
    worst = 0.0
    with torch.no_grad():
        for dtype in (None, torch.bfloat16):
            for _ in range(3):
                start = time.perf_counter()
                if dtype is None:
                    model(x)
                else:
                    with torch.autocast("cpu", dtype=dtype):
                        model(x)
                worst = max(worst, time.perf_counter() - start)
    return worst * 1e3


def cancel_latency(config, phase: str) -> float | None:
    """Seconds from the cancel flag to Cancelled, or None if the phase never came."""
    flag = threading.Event()
    set_at: list[float] = []
    entered = threading.Event()

    def progress(_fraction: float, message: str) -> None:
        if message.startswith(PHASES[phase]):
            entered.set()

    done: list[float] = []

    def work() -> None:
        try:
            run_experiment(config, progress=progress, cancel=flag.is_set)
        except Cancelled:
            done.append(time.perf_counter())

    thread = threading.Thread(target=work)
    thread.start()
    if not entered.wait(timeout=600):
        flag.set()
        thread.join()
        return None
    time.sleep(DELAY_S)
    set_at.append(time.perf_counter())
    flag.set()
    thread.join()
    return (done[0] - set_at[0]) if done else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 20.0])
    parser.add_argument("--presets", nargs="+", default=["tutorial", "gru", "large-mlp"])
    parser.add_argument("--smoke", action="store_true", help="two quick cases")
    args = parser.parse_args(argv)
    presets = {p.id: p for p in builtin_presets()}
    budgets, ids, phases = args.budgets, args.presets, list(PHASES)
    if args.smoke:
        budgets, ids, phases = [0.5], ["tutorial"], ["warm-up", "timing"]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print("| preset | budget s | phase | cancel ms | one forward ms | limit ms | ok |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    bad = 0
    for pid in ids:
        for budget in budgets:
            config = presets[pid].config.replace(min_time=budget)
            one = forward_ms(config)
            limit = SLACK_S * 1e3 + 2 * one
            for phase in phases:
                took = cancel_latency(config, phase)
                if took is None:
                    print(f"| {pid} | {budget:g} | {phase} | phase not reached | {one:.1f} | | |")
                    continue
                ok = took * 1e3 <= limit
                bad += not ok
                print(
                    f"| {pid} | {budget:g} | {phase} | {took * 1e3:.1f} | {one:.1f} | "
                    f"{limit:.0f} | {'yes' if ok else 'NO'} |"
                )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
