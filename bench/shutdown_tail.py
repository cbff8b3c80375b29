"""SIGINT and SIGTERM in the shutdown tail: after a command's outputs are written.

Each try starts `run --json --csv` (or `sweep --json --csv`) in a fresh folder, waits until
both outputs exist (they are published together), then sends SIGINT or SIGTERM after a random
delay within `--window` seconds (the tail the interpreter's teardown used to take) and checks:

- exit 0 (the process had already ended) or 130/143;
- stderr empty for exit 0, else exactly one line: `interrupted` / `terminated` (the signal came
  while the summary was printed) or `… (after all outputs were written)` (in the tail);
- both outputs complete (the JSON parses, the CSV has its header and a row per mode) and no
  temporary file of ours left.

Before the fix 9 of 70 such signals were ignored (exit 0, no line).

Usage: python bench/shutdown_tail.py [--tries 40] [--seed 0] [--window 1.0] [--min-time 0.05]
Prints one line per try and a summary; exit 1 if any try was not clean.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}


def command(kind: str, folder: Path, min_time: float) -> list[str]:
    small = ["--widths", "64,64,10", "--batch", "16", "--threads", "1", "--min-time", str(min_time)]
    extra = ["--values", "1,16", "--no-onednn"] if kind == "sweep" else []
    outputs = ["--json", str(folder / "out.json"), "--csv", str(folder / "out.csv")]
    return [sys.executable, "-m", "autocast_explorer", kind, *small, *extra, *outputs]


def check(folder: Path, proc: subprocess.Popen, signum: int, stderr: str) -> str:
    """'' when the try was clean, else what was wrong."""
    word, code = WORDS[signum]
    rc = proc.returncode
    if rc == 0:
        if stderr:
            return f"exit 0 with stderr {stderr!r}"
    elif rc == code:
        allowed = {f"{word}\n", f"{word} (after all outputs were written)\n"}
        if stderr not in allowed:
            return f"exit {rc} with stderr {stderr[-300:]!r}"
    else:
        return f"exit {rc} (expected 0 or {code}); stderr {stderr[-300:]!r}"
    try:
        json.loads((folder / "out.json").read_text())
        rows = (folder / "out.csv").read_text().splitlines()
    except (OSError, ValueError) as exc:
        return f"an output is missing or damaged: {exc}"
    if len(rows) < 2 or not rows[0].startswith(("mode,", "index,", "batch,", "param")):
        return f"the CSV is incomplete: {rows[:2]}"
    temps = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    return f"temporary files left: {temps}" if temps else ""


def one_try(kind: str, signum: int, delay: float, min_time: float) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="tail-") as tmp:
        folder = Path(tmp)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            command(kind, folder, min_time),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=folder,
        )
        deadline = time.monotonic() + 600
        while not ((folder / "out.json").exists() and (folder / "out.csv").exists()):
            if proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.002)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signum)
        _out, stderr = proc.communicate(timeout=120)
        where = "tail" if "after all outputs" in stderr else ("done" if not stderr else "print")
        return check(folder, proc, signum, stderr), where


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=float, default=1.0, help="seconds after the outputs")
    parser.add_argument("--min-time", type=float, default=0.05)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bad = 0
    landed: dict[str, int] = {}
    for i in range(args.tries):
        kind = rng.choice(["run", "sweep"])
        signum = rng.choice(list(WORDS))
        delay = rng.uniform(0, args.window)
        problem, where = one_try(kind, signum, delay, args.min_time)
        landed[where] = landed.get(where, 0) + 1
        bad += bool(problem)
        name = signal.Signals(signum).name
        print(f"{i + 1:3d} {kind:<5} {name:<7} +{delay:.3f}s {where:<5} {problem or 'clean'}")
    print(
        f"{args.tries - bad}/{args.tries} clean; signals landed: "
        + ", ".join(f"{k} {v}" for k, v in sorted(landed.items()))
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
