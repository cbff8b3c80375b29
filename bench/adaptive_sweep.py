"""Adaptive-sweep bench: do adaptive points save time and still reach ±3%? (Not in the suite.)

A 12-point batch sweep of the default MLP (batch 1 … 2048, log-spaced), measured with the old
fixed budget (every point spends `--min-time` seconds) and adaptively (each point stops as soon
as its speedup's 95% interval is within ±3%; the sweep's time goes where an interval can still
close, core/sweeps/budget.py), alternated `--rounds` times. Target: the adaptive sweep takes
at most half the fixed sweep's wall time, and every adaptive point reaches ±3%.

Run it on a quiet machine. Prints a Markdown block to paste into bench/RESULTS.md; exits 1 when
the target is missed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import statistics
import sys
import time

from autocast_explorer.core.experiment.certainty import SWEEP_TARGET
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.sweeps.result import SweepResult
from autocast_explorer.core.sweeps.runner import run_sweep
from autocast_explorer.core.sweeps.spec import parse_values

VALUES = "1:2048:12"


def timed_sweep(config: ExperimentConfig, values: tuple[int, ...], adaptive: bool):
    start = time.perf_counter()
    result = run_sweep(config, "batch", values, probe_onednn=False, adaptive=adaptive)
    return time.perf_counter() - start, result


def reached(result: SweepResult) -> list[bool]:
    """Per point: was its interval within ±SWEEP_TARGET at 95%?"""
    return [
        p.interval is not None
        and p.interval.level >= 0.95
        and p.interval.half_width <= SWEEP_TARGET
        for p in result.points
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="fixed/adaptive pairs (default 3)")
    parser.add_argument("--min-time", type=float, default=ExperimentConfig().min_time)
    parser.add_argument("--values", default=VALUES, help=f"batch values (default {VALUES})")
    parser.add_argument("--threads", type=int, default=None, help="default: torch's own")
    args = parser.parse_args(argv)
    config = ExperimentConfig(min_time=args.min_time, threads=args.threads)
    values = tuple(parse_values(args.values, "batch"))
    env = environment(args.threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    fixed_s, adaptive_s, hits, points = [], [], [], 0
    last = None
    for _ in range(args.rounds):
        seconds, _result = timed_sweep(config, values, adaptive=False)
        fixed_s.append(seconds)
        seconds, last = timed_sweep(config, values, adaptive=True)
        adaptive_s.append(seconds)
        got = reached(last)
        hits.append(sum(got))
        points = len(got)
    fixed, adaptive = statistics.median(fixed_s), statistics.median(adaptive_s)
    share = adaptive / fixed if fixed > 0 else float("nan")
    all_reached = all(h == points for h in hits)
    held = share <= 0.5 and all_reached
    lines = [
        f"Machine: {env.label()}; {env.cores} cores; {_dt.date.today()}; load average "
        f"{load:.1f} at start; {len(values)} points ({args.values}), {config.min_time:g} s "
        "budget per point.",
        "",
        "| check | median | rounds | target |",
        "| --- | --- | --- | --- |",
        f"| wall time, fixed budget | {fixed:.2f} s | {', '.join(f'{s:.2f}' for s in fixed_s)} | |",
        f"| wall time, adaptive | {adaptive:.2f} s | "
        f"{', '.join(f'{s:.2f}' for s in adaptive_s)} | |",
        f"| adaptive ÷ fixed | {share:.2f} | | ≤ 0.50 |",
        f"| adaptive points within ±{SWEEP_TARGET:.0%} | {min(hits)}/{points} (worst round) | "
        f"{', '.join(str(h) for h in hits)} | {points}/{points} |",
        "",
    ]
    if last is not None:
        lines.append("Last adaptive sweep, per point (batch: interval, stopped, stalls):")
        for p in last.points:
            band = p.interval
            text = f"{band.low:.3f}–{band.high:.3f} (±{band.half_width:.1%})" if band else "none"
            ev = p.evidence
            lines.append(
                f"- {p.value}: {p.speedup:.3f}× {text}, {ev.stopped if ev else '?'}, "
                f"{len(ev.stalls) if ev else 0} stalls"
            )
    lines += ["", f"Target: {'held' if held else 'missed'}."]
    print("\n".join(lines))
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
