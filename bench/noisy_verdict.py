"""Noisy-verdict bench: does a busy machine make the verdict lie? (Not part of the test suite.)

For the tutorial MLP, the GRU preset and the CNN (bench/load_bias.py's models), at 1 and 2
threads, runs the experiment `--repeats` times quiet, then beside 1 and 2 busy loops (plain
Python `while True` processes this script starts and stops), everything pinned to `--cores`
(default the first two: a 2-core laptop). Each run's verdict is read from its result document,
`latency.verdict` (the call the window makes: certainty.judge).

Targets:
- every verdict, quiet or busy, gives the quiet direction or says "can't tell" / "too noisy";
  none gives the wrong direction (faster where the quiet runs said slower, "same" where they
  said faster, …);
- on an AVX2-only host (no avx512_bf16, amx_bf16: also under `make test-as-avx2`'s switches),
  the tutorial MLP at 1 thread beside one busy loop says "slower" in every run: the direction
  survives the load bias bound (certainty.BIAS_BOUND), so the verdict must state it.

Run it on an otherwise quiet machine: the quiet baseline must be quiet. Prints a Markdown block
to paste into bench/RESULTS.md (and, with `--json FILE`, every run's verdict); exits 1 when a
target is missed, 2 when a model's quiet baseline could not tell its direction (inconclusive).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass

from load_bias import MODELS, busy_loops

from autocast_explorer.core.experiment.certainty import BIAS_BOUND
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.hardware.capabilities import native_support
from autocast_explorer.core.hardware.cpu import environment

#: The run the AVX2 target is about: the tutorial MLP at 1 thread beside one busy loop.
AVX2_CASE = ("tutorial MLP", 1, 1)


@dataclass(frozen=True)
class Verdict:
    """One run's verdict as its document states it, with the figures beside it."""

    model: str
    threads: int
    loops: int
    call: str
    direction: str | None
    factor: float | None
    speedup: float
    low: float | None
    high: float | None
    reasons: tuple[str, ...]
    medians: float | None = None  # plain median ÷ autocast median: what the bars show


def measure(name: str, config: ExperimentConfig, loops: int, repeats: int) -> list[Verdict]:
    processes = busy_loops(loops)
    try:
        if processes:
            time.sleep(0.5)  # let them reach full speed
        return [verdict_of(name, config, loops) for _ in range(repeats)]
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            p.wait(timeout=10)


def verdict_of(name: str, config: ExperimentConfig, loops: int) -> Verdict:
    latency = run_experiment(config).to_dict()["latency"]
    said = latency.get("verdict") or {"call": "not timed", "direction": None, "factor": None}
    band = latency.get("speedup_interval") or {}
    auto = (latency.get("autocast") or {}).get("median_ms")
    medians = float(latency["plain"]["median_ms"]) / float(auto) if auto else None
    return Verdict(
        name,
        config.threads or 0,
        loops,
        said["call"],
        said["direction"],
        said["factor"],
        latency["speedup"],
        band.get("low"),
        band.get("high"),
        tuple(said.get("reasons", ())),
        medians,
    )


def quiet_direction(runs: list[Verdict]) -> str | None:
    """The direction most quiet runs stated (None: most could not tell)."""
    said = Counter(r.direction for r in runs if r.loops == 0)
    return said.most_common(1)[0][0] if said else None


def check(run: Verdict, quiet: str | None) -> tuple[bool, str]:
    """(holds, why) for one run against its group's quiet direction."""
    if run.direction is None:
        return True, f"says {run.call}"
    if quiet is None:
        return True, f"states {run.direction} (quiet could not tell)"
    if run.direction != quiet:
        return False, f"WRONG: {run.direction} where quiet runs said {quiet}"
    return True, f"the quiet direction ({quiet})"


def avx2_target(runs: list[Verdict], avx2_only: bool) -> tuple[bool, str]:
    """The AVX2-only host's target: its tutorial MLP at 1 thread beside one busy loop says
    "slower" in every run (held where the host has native bf16: not its target)."""
    if not avx2_only:
        return True, "not an AVX2-only host: the 'slower under one busy loop' target does not apply"
    case = [r for r in runs if (r.model, r.threads, r.loops) == AVX2_CASE]
    if not case:
        return True, "not measured here (see --models, --threads, --loops)"
    calls = [r.call for r in case]
    held = all(c == "slower" for c in calls)
    return held, f"AVX2-only host, tutorial MLP, 1 thread, 1 busy loop: {', '.join(calls)}"


def table(runs: list[Verdict]) -> tuple[list[str], int, list[str]]:
    """Markdown rows, the count of wrong directions, and the groups whose quiet could not tell."""
    lines = [
        "| model | threads | busy loops | call | factor | 95% interval | medians' ratio | check |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    wrong, inconclusive = 0, []
    groups = dict.fromkeys((r.model, r.threads) for r in runs)
    for model, threads in groups:
        group = [r for r in runs if (r.model, r.threads) == (model, threads)]
        quiet = quiet_direction(group)
        if quiet is None and any(r.loops == 0 for r in group):
            inconclusive.append(f"{model} at {threads} thread(s)")
        for r in group:
            holds, why = check(r, quiet)
            wrong += not holds
            factor = "—" if r.factor is None else f"{r.factor:.3g}×"
            band = "none" if r.low is None else f"{r.low:.3g}–{r.high:.3g}"
            medians = "—" if r.medians is None else f"{r.medians:.3g}"
            lines.append(
                f"| {model} | {threads} | {r.loops} | {r.call} | {factor} | {band} | {medians} "
                f"| {why} |"
            )
    return lines, wrong, inconclusive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per condition (default 3)")
    parser.add_argument("--min-time", type=float, default=ExperimentConfig().min_time)
    parser.add_argument("--cores", default="0,1", help="CPUs to pin to (default 0,1)")
    parser.add_argument("--models", default=",".join(MODELS), help="which models, by name")
    parser.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    parser.add_argument("--loops", default="0,1,2", help="busy loops beside (default 0,1,2)")
    parser.add_argument("--json", default=None, help="write every run's verdict here")
    args = parser.parse_args(argv)
    cores = {int(c) for c in args.cores.split(",")}
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cores)  # the busy loops inherit it
    loops = sorted({0, *(int(n) for n in args.loops.split(","))})  # quiet is the baseline
    runs: list[Verdict] = []
    for name in (m.strip() for m in args.models.split(",")):
        for threads in (int(t) for t in args.threads.split(",")):
            config = ExperimentConfig(
                **{**MODELS[name], "min_time": args.min_time, "threads": threads}  # type: ignore[arg-type]
            )
            for count in loops:
                runs += measure(name, config, count, args.repeats)
                print(f"{name} · {threads} thread(s) · {count} busy loop(s) done", file=sys.stderr)
    env = environment(None)
    avx2_only = not native_support(env.cpu_flags, "bfloat16").native
    lines, wrong, inconclusive = table(runs)
    avx2_held, avx2_words = avx2_target(runs, avx2_only)
    print(
        f"Machine: {env.label()}; pinned to CPUs {sorted(cores)}; {_dt.date.today()}; "
        f"min_time {args.min_time:g} s per mode; {args.repeats} runs per condition; "
        f"bias bound {BIAS_BOUND:g}×.\n"
    )
    print("\n".join(lines))
    print(f"\nWrong directions: {wrong}. {avx2_words}: {'held' if avx2_held else 'MISSED'}.")
    if inconclusive:
        print(f"Inconclusive: the quiet runs could not tell for {', '.join(inconclusive)}.")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([asdict(r) for r in runs], f, indent=1)
    if wrong or not avx2_held:
        return 1
    return 2 if inconclusive else 0


if __name__ == "__main__":
    sys.exit(main())
