"""How far can other programs move the measured speedup? (Not part of the test suite.)

The verdict may state a direction under load only when the whole interval lies beyond the worst
bias load was seen to cause. This script measures that bias: for each model (the tutorial MLP,
the GRU preset, the CNN preset) and each torch thread count (1, 2), it runs the experiment quiet
and beside 1 and 2 busy loops (plain Python `while True` processes), all pinned to the same
`--cores` cores (default: the first two, a 2-core laptop), and reports each busy run's paired
speedup divided by the quiet median: the bias factor. The largest factor either way
is the bound a busy verdict must clear.

Run it on an otherwise quiet machine. Prints a Markdown block for bench/RESULTS.md and, with
`--json FILE`, every run's figures.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.hardware.cpu import environment

MODELS: dict[str, dict[str, object]] = {
    "tutorial MLP": {},
    "GRU preset": {
        "model": "rnn",
        "cell": "gru",
        "features": 32,
        "hidden": 64,
        "seq": 32,
        "depth": 2,
        "classes": 10,
        "batch": 16,
    },
    "CNN": {"model": "cnn", "batch": 32},
}


@dataclass(frozen=True)
class Run:
    model: str
    threads: int
    loops: int
    speedup: float
    low: float | None
    high: float | None
    call: str
    plain_ms: float
    autocast_ms: float


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` processes spinning until stopped (they inherit this process's CPU affinity)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def measure(name: str, config: ExperimentConfig, loops: int, repeats: int) -> list[Run]:
    processes = busy_loops(loops)
    try:
        if processes:
            time.sleep(0.5)  # let them reach full speed
        runs = []
        for _ in range(repeats):
            result = run_experiment(config)
            ev = result.evidence
            band = ev.interval if ev is not None else None
            runs.append(
                Run(
                    name,
                    config.threads or 0,
                    loops,
                    result.speedup,
                    band.low if band else None,
                    band.high if band else None,
                    result.speed_call.kind,
                    result.plain.median_ms,
                    result.autocast.median_ms if result.autocast else float("nan"),
                )
            )
        return runs
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            p.wait(timeout=10)


def table(runs: list[Run]) -> tuple[list[str], float]:
    """Markdown rows (bias factor = busy speedup ÷ quiet median) and the worst factor (≥ 1)."""
    lines = [
        "| model | threads | busy loops | speedup | 95% interval | call | bias ÷ quiet |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    worst = 1.0
    for name in MODELS:
        for threads in sorted({r.threads for r in runs}):
            group = [r for r in runs if r.model == name and r.threads == threads]
            quiet = [r.speedup for r in group if r.loops == 0]
            if not quiet:
                continue
            base = statistics.median(quiet)
            for r in group:
                factor = r.speedup / base
                if r.loops:
                    worst = max(worst, factor, 1 / factor)
                band = f"{r.low:.3f}–{r.high:.3f}" if r.low is not None else "none"
                lines.append(
                    f"| {name} | {threads} | {r.loops} | {r.speedup:.3f}× | {band} | {r.call} "
                    f"| {factor:.2f} |"
                )
    return lines, worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per condition (default 3)")
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per mode")
    parser.add_argument("--cores", default="0,1", help="CPUs to pin to (default 0,1)")
    parser.add_argument("--models", default=",".join(MODELS), help="which models, by name")
    parser.add_argument("--json", default=None, help="write every run's figures here")
    args = parser.parse_args(argv)
    cores = {int(c) for c in args.cores.split(",")}
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cores)
    wanted = [m.strip() for m in args.models.split(",")]
    runs: list[Run] = []
    for name in wanted:
        for threads in (1, 2):
            config = ExperimentConfig(
                **{**MODELS[name], "min_time": args.min_time, "threads": threads}  # type: ignore[arg-type]
            )
            for loops in (0, 1, 2):
                runs += measure(name, config, loops, args.repeats)
                print(f"{name} · {threads} thread(s) · {loops} busy loop(s) done", file=sys.stderr)
    env = environment(None)
    lines, worst = table(runs)
    print(
        f"Machine: {env.label()}; pinned to CPUs {sorted(cores)}; {_dt.date.today()}; "
        f"min_time {args.min_time:g} s per mode; {args.repeats} runs per condition.\n"
    )
    print("\n".join(lines))
    print(f"\nWorst bias seen under load: {worst:.2f}× (either way).")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([r.__dict__ for r in runs], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
