"""How long the whole op-policy probe takes (target: ≤ 10 s on 2 cores). Not part of the tests.

Measures, in fresh processes so each pays what `autocast-explorer ops` pays:
(a) the whole probe (every op in the catalog, all input cases) for bfloat16 and float16, with
    1 and 2 torch threads, in a worker thread as the window runs it (progress and a cancel
    check between ops), repeated and alternated; median and range;
(b) the first probe in a process (lazy kernel initialisation) against the following ones;
(c) `autocast-explorer ops` end to end (import + probe + table) as a user sees it.
Prints a Markdown block for bench/RESULTS.md, with the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, threading, time
from autocast_explorer.core.numerics.oppolicy import probe_ops, PROBED_OPS
dtype, threads, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
times, progress_calls = [], []

def worker():
    for _ in range(repeats):
        t0 = time.perf_counter()
        probe_ops(dtype, threads=threads, progress=lambda f, m: progress_calls.append(f),
                  cancel=lambda: False)
        times.append(time.perf_counter() - t0)

t = threading.Thread(target=worker)
t.start(); t.join()
print(json.dumps({"times": times, "ops": len(PROBED_OPS), "progress": len(progress_calls)}))
"""


def probe_in_child(dtype: str, threads: int, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, dtype, str(threads), str(repeats)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli_wall(threads: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "autocast_explorer", "ops", "--threads", str(threads)],
        capture_output=True,
        check=True,
        env=env,
    )
    return time.perf_counter() - t0


def cpu_words() -> str:
    import torch

    caps = torch.cpu.get_capabilities() if hasattr(torch.cpu, "get_capabilities") else {}
    name = caps.get("cpu_name") if isinstance(caps, dict) else None
    flags = []
    try:
        text = Path("/proc/cpuinfo").read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith("flags"))
        wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "avx512_fp16")
        flags = [f for f in wanted if f" {f}" in line]
        name = name or next(ln for ln in text.splitlines() if "model name" in ln).split(":")[1]
    except (OSError, StopIteration):
        pass
    return f"{(name or '?').strip()}, {os.cpu_count()} cores, flags {' '.join(flags)}"


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="processes per variant")
    parser.add_argument("--repeats", type=int, default=3, help="probes per process")
    args = parser.parse_args()
    import torch

    load_before = Path("/proc/loadavg").read_text().split()[:3]
    variants = [(d, t) for t in (1, 2) for d in ("bfloat16", "float16")]
    first: dict[tuple[str, int], list[float]] = {v: [] for v in variants}
    warm: dict[tuple[str, int], list[float]] = {v: [] for v in variants}
    ops = progress = 0
    for _ in range(args.rounds):  # alternated, so a noisy moment hits every variant
        for dtype, threads in variants:
            got = probe_in_child(dtype, threads, args.repeats)
            first[(dtype, threads)].append(got["times"][0])
            warm[(dtype, threads)] += got["times"][1:]
            ops, progress = got["ops"], got["progress"]
    cli = {t: [cli_wall(t) for _ in range(args.rounds)] for t in (1, 2)}
    load_after = Path("/proc/loadavg").read_text().split()[:3]

    print(f"Machine: {cpu_words()}; torch {torch.__version__}.")
    print(f"Load average before/after: {' '.join(load_before)} / {' '.join(load_after)}.")
    per_probe = progress // args.repeats
    print(f"{ops} ops, {per_probe} progress calls per probe (one per op, then 'done').")
    print()
    print("| dtype | threads | first probe in a process, s (median, range) | later probes, s |")
    print("|---|---:|---|---|")
    for dtype, threads in variants:
        f, w = first[(dtype, threads)], warm[(dtype, threads)]
        print(
            f"| {dtype} | {threads} | {statistics.median(f):.2f} ({min(f):.2f}–{max(f):.2f}) | "
            f"{statistics.median(w):.2f} ({min(w):.2f}–{max(w):.2f}) |"
            if w
            else f"| {dtype} | {threads} | {statistics.median(f):.2f} | – |"
        )
    print()
    for threads, walls in cli.items():
        print(
            f"`autocast-explorer ops --threads {threads}` end to end: median "
            f"{statistics.median(walls):.2f} s ({min(walls):.2f}–{max(walls):.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
