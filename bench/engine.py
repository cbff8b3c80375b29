"""Engine bench: is the engine's timing honest and cheap? (Not part of the test suite.)

(a) engine medians vs torch.utils.benchmark's blocked_autorange on the same model, widths 256
    and 1024, both modes; measured side by side in alternating rounds (target ratio 0.9–1.1);
(b) harness overhead: the engine timing nn.Identity, as a share of the default model's plain
    median (target ≤ 1%);
(c) wall time of `autocast-explorer run` (defaults) relative to `python -c "import torch"`
    (target ≤ 2.5×), alternated.
Prints a Markdown block to paste into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch.utils import benchmark

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import forward_fns
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.experiment.timing import measure_alternating
from autocast_explorer.core.hardware.cpu import environment

ROUNDS = 5
MIN_TIME = 0.3


def engine_vs_torch(width: int) -> dict[str, list[float]]:
    config = ExperimentConfig(widths=(width, width, width, 10), min_time=MIN_TIME)
    model, x = build(config)
    plain, auto = forward_fns(model, x, torch.bfloat16)
    ratios: dict[str, list[float]] = {"plain": [], "autocast": []}
    for _ in range(ROUNDS):
        # Both timers run the same callables under one no_grad, as the engine does.
        stats = measure_alternating([plain, auto], MIN_TIME)
        for mode, fn, s in (("plain", plain, stats[0]), ("autocast", auto, stats[1])):
            ref = benchmark.Timer(
                "fn()", globals={"fn": fn}, num_threads=torch.get_num_threads()
            ).blocked_autorange(min_run_time=MIN_TIME)
            ratios[mode].append(s.median_ms / (ref.median * 1e3))
    return ratios


def harness_overhead() -> tuple[float, float]:
    config = ExperimentConfig(min_time=MIN_TIME)
    model, x = build(config)
    plain, _ = forward_fns(model, x, torch.bfloat16)
    identity, _ = forward_fns(torch.nn.Identity(), x, torch.bfloat16)
    shares = []
    floors = []
    for _ in range(ROUNDS):
        floor, real = measure_alternating([identity, plain], MIN_TIME)
        shares.append(floor.median_ms / real.median_ms)
        floors.append(floor.median_ms)
    return statistics.median(floors), statistics.median(shares)


def cli_vs_import() -> tuple[float, float, float]:
    threads = ["--threads", str(torch.get_num_threads())]
    exe = [sys.executable, "-m", "autocast_explorer", "run", *threads]
    imp = [sys.executable, "-c", "import torch"]
    runs, imports = [], []
    for _ in range(ROUNDS):
        for cmd, sink in ((imp, imports), (exe, runs)):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            sink.append(time.perf_counter() - start)
    ratios = [r / i for r, i in zip(runs, imports, strict=True)]
    return statistics.median(runs), statistics.median(imports), statistics.median(ratios)


@torch.no_grad()
def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]
    env = environment()
    lines = [
        f"Machine: {env.cpu_model}, {env.cores} cores, flags {' '.join(env.cpu_flags)}; "
        f"torch {env.torch_version}, {env.threads} threads; {time.strftime('%Y-%m-%d')}; "
        f"load average {load:.1f} at start.",
        "",
        "| check | median | target |",
        "| --- | --- | --- |",
    ]
    for width in (256, 1024):
        ratios = engine_vs_torch(width)
        for mode, values in ratios.items():
            lines.append(
                f"| (a) engine / blocked_autorange, width {width}, {mode} | "
                f"{statistics.median(values):.3f} (rounds: "
                f"{', '.join(f'{v:.2f}' for v in values)}) | 0.9–1.1 |"
            )
    floor_ms, share = harness_overhead()
    lines.append(
        f"| (b) harness floor (nn.Identity) / default plain median | {share:.2%} "
        f"({floor_ms * 1e3:.1f} µs per call) | ≤ 1% |"
    )
    run_s, import_s, ratio = cli_vs_import()
    lines.append(
        f"| (c) `autocast-explorer run` / `python -c 'import torch'` | {ratio:.2f}× "
        f"({run_s:.2f} s vs {import_s:.2f} s) | ≤ 2.5× |"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
