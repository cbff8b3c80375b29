"""Noisy-verdict bench: does a busy machine make the verdict lie? (Not part of the test suite.)

Runs the default experiment (the tutorial's MLP, batch 128, default threads) `--repeats` times
quiet, then with 1 and with 2 background busy loops that this script starts (plain Python
`while True` processes) and stops. Target: every busy run's verdict is within ±15% of the quiet
median speedup or says "too noisy to tell" (or "can't tell"), and never the wrong direction
(faster where quiet was slower, or the other way round).

Run it on an otherwise quiet machine: the "quiet" baseline must be quiet. Prints a Markdown block
to paste into bench/RESULTS.md; exits 1 when the target is missed, 2 when the quiet baseline was
itself too noisy to tell (inconclusive).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import statistics
import subprocess
import sys
import time

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.hardware.cpu import environment

TOLERANCE = 1.15
DIRECTIONS = {"faster": 1, "slower": -1}


def busy_loops(count: int) -> list[subprocess.Popen]:
    """`count` processes spinning on a core each, until stopped."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        p.terminate()
    for p in processes:
        p.wait(timeout=10)


def measure(config: ExperimentConfig, repeats: int, loops: int) -> list[ExperimentResult]:
    processes = busy_loops(loops)
    try:
        if processes:
            time.sleep(0.5)  # let them reach full speed
        return [run_experiment(config) for _ in range(repeats)]
    finally:
        stop(processes)


def judge_busy(quiet_speedup: float, quiet_kind: str, busy: ExperimentResult) -> tuple[bool, str]:
    """(holds, why) for one busy run against the quiet baseline."""
    call = busy.speed_call
    if call.kind in ("noisy", "unclear"):
        return True, "says " + ("too noisy to tell" if call.kind == "noisy" else "can't tell")
    wrong = DIRECTIONS.get(call.kind, 0) * DIRECTIONS.get(quiet_kind, 0) < 0
    if wrong:
        return False, f"wrong direction: {call.kind} where quiet was {quiet_kind}"
    ratio = busy.speedup / quiet_speedup
    if 1 / TOLERANCE <= ratio <= TOLERANCE:
        return True, f"within ±15% of quiet ({ratio:.3f}×)"
    return False, f"{ratio:.3f}× the quiet speedup, stated as {call.kind}"


def row(label: str, result: ExperimentResult, verdict: str) -> str:
    ev = result.evidence
    interval = ev.interval if ev is not None else None
    band = f"{interval.low:.3f}–{interval.high:.3f}" if interval else "none"
    load = ev.load.busy_text() if ev is not None and ev.load is not None else ""
    stalls = len(ev.stalls) if ev is not None else 0
    return (
        f"| {label} | {result.speedup:.3f}× | {band} | {result.speed_call.kind} | "
        f"{stalls} | {ev.stopped if ev else ''} | {load or 'n/a'} | {verdict} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per condition (default 3)")
    parser.add_argument("--min-time", type=float, default=ExperimentConfig().min_time)
    parser.add_argument("--max-time", type=float, default=None)
    parser.add_argument("--threads", type=int, default=None, help="default: torch's own")
    args = parser.parse_args(argv)
    config = ExperimentConfig(min_time=args.min_time, max_time=args.max_time, threads=args.threads)
    env = environment(args.threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    quiet = measure(config, args.repeats, 0)
    quiet_speedup = statistics.median(r.speedup for r in quiet)
    quiet_kinds = [r.speed_call.kind for r in quiet]
    quiet_kind = max(set(quiet_kinds), key=quiet_kinds.count)
    lines = [
        f"Machine: {env.label()}; {env.cores} cores; {_dt.date.today()}; load average "
        f"{load:.1f} at start; min_time {config.min_time:g} s, max_time {config.time_limit:g} s "
        "per mode.",
        "",
        f"Quiet median speedup {quiet_speedup:.3f}× ({quiet_kind}).",
        "",
        "| condition | speedup | 95% interval | call | stalls | stopped | load | check |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [row("quiet", r, "baseline") for r in quiet]
    failures = 0
    for loops in (1, 2):
        for result in measure(config, args.repeats, loops):
            holds, why = judge_busy(quiet_speedup, quiet_kind, result)
            failures += not holds
            lines.append(row(f"{loops} busy loop{'s' if loops > 1 else ''}", result, why))
    if quiet_kind == "noisy":
        lines += [
            "",
            "Inconclusive: the quiet baseline was itself too noisy to tell; rerun on a "
            "quiet machine (no other jobs).",
        ]
        print("\n".join(lines))
        return 2
    lines += ["", f"Target: {'held' if not failures else f'missed ({failures} runs)'}."]
    print("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
