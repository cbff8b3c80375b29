"""Bench: where autocast starts to pay for each model family on this CPU.

One sweep per family, 1 torch thread (robust on a shared machine), each point measured with
float32 and autocast alternated (the same protocol as `autocast-explorer sweep`): a batch
sweep for the MLP and the CNN, sequence-length sweeps for the transformer (fast path on and
off) and the LSTM / GRU. Prints Markdown for bench/RESULTS.md with speedups, crossovers, the
verdict and the machine (CPU, flags, load before and after).

Run: PYTHONPATH=. .venv/bin/python bench/family_sweeps.py [--min-time 0.2]
"""

from __future__ import annotations

import argparse
import os
import time

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.sweeps.crossover import format_value
from autocast_explorer.core.sweeps.runner import run_sweep

SWEEPS: tuple[tuple[str, ExperimentConfig, str, tuple[int, ...]], ...] = (
    ("MLP 256,256,256,10", ExperimentConfig(), "batch", (1, 8, 64, 256, 1024)),
    ("CNN 3→32→64, 32×32", ExperimentConfig(model="cnn"), "batch", (1, 4, 16, 64, 128)),
    (
        "Transformer d64 h4 depth 2, batch 8, fast path",
        ExperimentConfig(model="transformer", batch=8),
        "seq",
        (16, 64, 256),
    ),
    (
        "Transformer d64 h4 depth 2, batch 8, fast path off",
        ExperimentConfig(model="transformer", batch=8, fast_path=False),
        "seq",
        (16, 64, 256),
    ),
    (
        "LSTM 32→64 depth 2, batch 16",
        ExperimentConfig(model="rnn", cell="lstm", batch=16),
        "seq",
        (8, 32, 128),
    ),
    (
        "GRU 32→64 depth 2, batch 16",
        ExperimentConfig(model="rnn", cell="gru", batch=16),
        "seq",
        (8, 32, 128),
    ),
)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1 min) / {five:.2f} (5 min)"


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--min-time", type=float, default=0.2)
    args = parser.parse_args()
    env = environment(1)
    flags = ", ".join(sorted(f for f in env.cpu_flags if "bf16" in f or "amx" in f)) or "none"
    print(f"{env.cpu_model} · torch {env.torch_version} · 1 thread · bf16 flags: {flags}")
    print(f"load before: {load()} · min_time {args.min_time} s per point\n")
    for title, base, param, values in SWEEPS:
        start = time.perf_counter()
        result = run_sweep(base.replace(threads=1, min_time=args.min_time), param, values)
        wall = time.perf_counter() - start
        cells = " | ".join(
            f"{p.value}: {p.plain.median_ms:.3f} / {p.autocast.median_ms:.3f} ms = "
            f"**{p.speedup:.2f}×**"
            for p in result.points
        )
        cross = result.crossover
        crossing = "none" if not cross else ", ".join(f"{param} {format_value(c)}" for c in cross)
        print(f"- **{title}**, {param} sweep ({wall:.0f} s): {cells}")
        print(f"  - crossover: {crossing}; verdict: {result.verdict.sentence}")
        for warning in result.warnings:
            print(f"  - warning: {warning[:160]}")
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()
