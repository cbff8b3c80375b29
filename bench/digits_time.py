"""`python bench/digits_time.py`: does `run --data digits` finish in ≤ 15 s, training included?

For the MLP and the CNN, in bfloat16 and float16, runs the real command line
(`python -m autocast_explorer run --data digits …`) in a fresh process and times it wall-clock
from start to exit (torch import, reading the digits, 20 epochs of float32 training, both
held-out evaluations, the per-layer capture and trace, and the default 0.5 s per mode of timing).
Prints one line per run with its float32 and autocast held-out accuracy, and a Markdown table
for bench/RESULTS.md. Run it on a quiet machine: on a busy one the times mean nothing.

`--min-time 0.02 --epochs 1` is a smoke run that only shows the script works.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

TARGET_S = 15.0
MIN_ACCURACY = 0.95


def one_run(model: str, dtype: str, args: argparse.Namespace) -> dict:
    argv = [sys.executable, "-m", "autocast_explorer", "run", "--data", "digits"]
    argv += ["--model", model, "--dtype", dtype, "--json", "-"]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    if args.min_time is not None:
        argv += ["--min-time", str(args.min_time)]
    if args.epochs is not None:
        argv += ["--epochs", str(args.epochs)]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv[1:])} exited {done.returncode}: {done.stderr}")
    data = json.loads(done.stdout)
    acc = data["accuracy"]
    return {
        "model": model,
        "dtype": dtype,
        "seconds": seconds,
        "plain": acc["plain"],
        "autocast": acc["autocast"],
        "flipped": acc["flipped_total"],
        "interval": acc["interval"],
        "threads": data["environment"]["threads"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's)")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per mode")
    parser.add_argument("--epochs", type=int, default=None, help="(smoke runs only)")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"load average {load:.1f} at start.",
        flush=True,
    )
    rows, ok = [], True
    for model in ("mlp", "cnn"):
        for dtype in ("bfloat16", "float16"):
            r = one_run(model, dtype, args)
            rows.append(r)
            good = r["seconds"] <= TARGET_S and r["plain"] >= MIN_ACCURACY
            ok &= good
            print(
                f"{model} {dtype}: {r['seconds']:.1f} s (target ≤ {TARGET_S:g}), held-out "
                f"float32 {r['plain']:.2%}, autocast {r['autocast']:.2%}, {r['flipped']} flipped"
                f"{'' if good else '  <-- MISSES'}",
                flush=True,
            )
    print("\n| model | dtype | threads | wall s (≤ 15) | float32 | autocast | flipped |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['model']} | {r['dtype']} | {r['threads']} | {r['seconds']:.1f} | "
            f"{r['plain']:.2%} | {r['autocast']:.2%} | {r['flipped']} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
