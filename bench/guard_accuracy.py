"""The time guard's forecast against the measured slower mode, for a small, medium and large MLP.

Target: estimate within 3× of the measured slower median (either way) on every CPU kind. Run it
once natively and once as an AVX2 host (docs/measurement.md). Prints Markdown.
"""

from __future__ import annotations

import argparse
import os

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.hardware.cpu import environment

CONFIGS = (
    ("small (tutorial)", (256, 256, 256, 10), 128),
    ("medium", (1024, 1024, 1024, 10), 256),
    ("large", (2048, 2048, 2048, 10), 1024),
)
TARGET = 3.0


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min-time", type=float, default=0.5)
    args = parser.parse_args()
    env = environment(args.threads)
    print(
        f"Machine: {env.cpu_model}; flags ({env.extra.get('flags_source')}): "
        f"{', '.join(env.cpu_flags)}; capability {env.cpu_capability}; {args.threads} thread(s); "
        f"load {os.getloadavg()[0]:.2f} at start"
    )
    print()
    print("| config | float32 ms | autocast ms | guard estimate ms | estimate / slower | basis |")
    print("|---|---:|---:|---:|---:|---|")
    for name, widths, batch in CONFIGS:
        config = ExperimentConfig(
            widths=widths, batch=batch, threads=args.threads, min_time=args.min_time
        )
        result = run_experiment(config)
        assert result.guard is not None
        ratio = result.guard.estimated_forward_ms / result.slower_ms
        mark = "" if 1 / TARGET <= ratio <= TARGET else " **outside 3×**"
        print(
            f"| {name}: {','.join(map(str, widths))} batch {batch} | "
            f"{result.plain.median_ms:.3f} | {result.autocast.median_ms:.3f} | "
            f"{result.guard.estimated_forward_ms:.3f} | {ratio:.2f}{mark} | {result.guard.basis} |"
        )
    print()
    print(f"(load {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
