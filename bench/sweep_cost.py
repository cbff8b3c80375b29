"""Sweep bench: what a sweep costs, and what sweeps find on this machine.

1. Cost: an N-point sweep's wall time (guards, building, warm-up, timing, oneDNN probe,
   verdict, roofline: the whole `run_sweep` call) against the sum of its per-point
   measurement budgets (N × min_time). Target: ratio ≤ 1.3. Repeated; the median ratio counts.
2. Findings: a batch sweep 1…2048 and a width sweep 64…4096 at the tutorial's widths, a
   float16 batch sweep, and the placements of the tutorial's config: speedups and crossovers.

Prints Markdown for bench/RESULTS.md. Run: .venv/bin/python bench/sweep_cost.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.sweeps.placements import measure_placements
from autocast_explorer.core.sweeps.result import SweepResult
from autocast_explorer.core.sweeps.runner import run_sweep
from autocast_explorer.core.sweeps.spec import log_spaced

TARGET = 1.3


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def cost(
    points: int,
    min_time: float,
    repeats: int,
    threads: int | None,
    widths: tuple[int, ...] = (256, 256, 256, 10),
) -> list[str]:
    config = ExperimentConfig(widths=widths, min_time=min_time, threads=threads)
    values = log_spaced(1, 512, points)
    budget = len(values) * min_time
    run_sweep(config, "batch", values[:2], probe_onednn=False)  # warm the process once
    ratios = []
    lines = [
        f"N = {len(values)} points (batch {values[0]}…{values[-1]}, widths "
        f"{','.join(map(str, widths))}, "
        f"{threads or torch.get_num_threads()} threads), "
        f"min_time {min_time} s per point → budget {budget:.2f} s per sweep; "
        f"whole `run_sweep` call incl. guards, oneDNN probe, verdict, roofline.",
        "",
        "| repeat | wall s | budget s | wall / budget |",
        "|---:|---:|---:|---:|",
    ]
    for i in range(repeats):
        start = time.perf_counter()
        run_sweep(config, "batch", values)
        wall = time.perf_counter() - start
        ratios.append(wall / budget)
        lines.append(f"| {i + 1} | {wall:.2f} | {budget:.2f} | {wall / budget:.3f} |")
    median = statistics.median(ratios)
    verdict = "meets" if median <= TARGET else "MISSES"
    lines += ["", f"Median ratio **{median:.3f}** ({verdict} the ≤ {TARGET} target)."]
    return lines


def table(result: SweepResult) -> list[str]:
    param = result.spec.param
    lines = [
        f"| {param} | float32 ms | {result.config.dtype} ms | speedup | "
        "GFLOP/s f32 | GFLOP/s auto |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for p in result.points:
        lines.append(
            f"| {p.value} | {p.plain.median_ms:.4f} | {p.autocast.median_ms:.4f} | "
            f"{p.speedup:.2f}× | {p.gflops_plain:.1f} | {p.gflops_autocast:.1f} |"
        )
    lines += [
        "",
        f"- {result.crossover_sentence}",
        f"- Verdict: {result.verdict.sentence}",
    ]
    if result.verdict.onednn is not None:
        lines.append(f"- oneDNN: {result.verdict.onednn.summary}")
    for peak in result.roofline.peaks:
        lines.append(f"- Roofline peak {peak.dtype}: {peak.formula}")
    if result.roofline.note:
        lines.append(f"- Roofline note: {result.roofline.note}")
    lines += [f"- Warning: {w}" for w in result.warnings]
    return lines


def findings(min_time: float, threads: int | None) -> list[str]:
    out: list[str] = []
    base = ExperimentConfig(min_time=min_time, threads=threads)
    count = threads or torch.get_num_threads()
    n = f"{count} thread{'s' if count != 1 else ''}"
    runs = [
        (
            f"Batch sweep, bfloat16, widths 256,256,256,10, {n}",
            base,
            "batch",
            log_spaced(1, 2048, 12),
        ),
        (
            f"Width sweep, bfloat16, batch 128 (input 256, 2 hidden, 10 classes), {n}",
            base,
            "width",
            log_spaced(64, 4096, 7),
        ),
        (
            f"Batch sweep, float16, widths 256,256,256,10, {n}",
            base.replace(dtype="float16"),
            "batch",
            log_spaced(1, 2048, 6),
        ),
    ]
    for title, config, param, values in runs:
        start = time.perf_counter()
        result = run_sweep(config, param, values)
        wall = time.perf_counter() - start
        out += [f"#### {title} ({wall:.1f} s, {load()})", "", *table(result), ""]
    placements = measure_placements(base)
    out += [
        f"#### Placements, tutorial config (256,256,256,10, batch 128, bfloat16, {n})",
        "",
        "| placement | median ms | casts / forward | bytes cast / forward | once |",
        "|---|---:|---:|---:|---:|",
        f"| float32 | {placements.float32.median_ms:.4f} | – | – | – |",
    ]
    for mode in placements.modes:
        out.append(
            f"| {mode.label} | {mode.median_ms:.4f} | {mode.casts_per_forward} | "
            f"{mode.cast_bytes} | {mode.one_time_casts} casts, {mode.one_time_cast_bytes} B |"
        )
    out += ["", f"- {placements.explanation}", ""]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--findings-min-time", type=float, default=0.3)
    parser.add_argument("--skip-findings", action="store_true")
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument(
        "--widths",
        default="256,256,256,10",
        help="layer widths of the cost sweep (wider: slower forwards, as on an AVX2 host)",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    args = parser.parse_args()
    env = environment()
    print(
        f"Machine: {env.cpu_model}, {env.cores} logical cores, torch {env.torch_version}, "
        f"{torch.get_num_threads()} threads, capability {env.cpu_capability}, "
        f"flags {', '.join(env.cpu_flags)}; {load()} at start."
    )
    print()
    if not args.skip_cost:
        print("#### Cost of a sweep")
        print()
        widths = tuple(int(w) for w in args.widths.split(","))
        print("\n".join(cost(args.points, args.min_time, args.repeats, args.threads, widths)))
        print()
    if not args.skip_findings:
        print("\n".join(findings(args.findings_min_time, args.threads)))
    print(f"({load()} at the end)")


if __name__ == "__main__":
    main()
