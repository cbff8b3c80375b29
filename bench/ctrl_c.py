"""Ctrl-C and SIGTERM at random moments of real commands: every try must end cleanly.

Each try starts one command in a fresh folder (`run --report --json`, `sweep --json --csv` or
`ops --json`), waits a random time within that command's own duration (measured first, so the
signal lands anywhere from the program's first line through torch loading, measuring, Qt drawing
the report's charts offscreen and the final swap), sends SIGINT (or SIGTERM) and checks:

- the exit code is 130 for SIGINT, 143 for SIGTERM (or 0 when the command had already finished);
- stderr is exactly one line, `interrupted` / `terminated` (or, in the shutdown tail, `… (after
  all outputs were written)`: see bench/shutdown_tail.py), with no traceback or fatal error;
- nothing partial is left: every output is absent or complete (a report folder holds all 7
  files, a JSON file parses), and no temporary file or folder of ours remains.

The earliest moment tried is the time a bare interpreter takes to start (`python -S -c pass`):
before the program's first line runs, a signal meets Python's defaults, as for any program.

Usage: python bench/ctrl_c.py [--tries 100] [--seed 0] [--min-time 0.2]
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT_FILES = {
    "result.json",
    "result.csv",
    "report.md",
    "reproduce.py",
    "latency.png",
    "dtypes.png",
    "agreement.png",
}
SIGNALS = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}


@dataclass(frozen=True)
class Try:
    """What one try did and whether it was clean (`problem` is empty when it was)."""

    command: str
    signum: int
    delay: float
    returncode: int
    finished_first: bool
    problem: str


def commands(folder: Path, min_time: float) -> dict[str, list[str]]:
    """The commands tried, writing every output into `folder`."""
    small = ["--widths", "256,256,256,10", "--batch", "64", "--threads", "1"]
    timing = ["--min-time", str(min_time)]
    return {
        "run --report": [
            "run",
            *small,
            *timing,
            "--report",
            str(folder / "report"),
            "--json",
            str(folder / "out.json"),
        ],
        "sweep": [
            "sweep",
            "--values",
            "1,16,64",
            "--no-onednn",
            *small,
            *timing,
            "--json",
            str(folder / "out.json"),
            "--csv",
            str(folder / "out.csv"),
        ],
        "ops": ["ops", "--threads", "1", "--json", str(folder / "out.json")],
    }


def _start(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.Popen(
        [sys.executable, "-m", "autocast_explorer", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def duration(name: str, min_time: float) -> float:
    """Seconds one uninterrupted run of command `name` takes on this machine now."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        proc = _start(commands(Path(tmp), min_time)[name])
        _, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed without a signal: {err.strip()}")
        return time.monotonic() - start


def interpreter_start() -> float:
    """Seconds a bare `python -c pass` takes: before that no program's code runs, so a signal
    then meets Python's own defaults; tries start their clock after it."""
    times = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        times.append(time.monotonic() - start)
    return sorted(times)[1]


def leftovers(folder: Path) -> str:
    """'' when every output is absent or complete and nothing temporary remains."""
    problems = []
    for entry in folder.iterdir():
        if entry.name.startswith("."):
            problems.append(f"temporary {entry.name} left")
    report = folder / "report"
    if report.exists():
        found = {p.name for p in report.iterdir()}
        if found != REPORT_FILES:
            problems.append(f"report holds {sorted(found)}")
    for name in ("out.json", "report/result.json"):
        path = folder / name
        if path.exists():
            try:
                json.loads(path.read_text())
            except ValueError:
                problems.append(f"{name} is not complete JSON")
    return "; ".join(problems)


def trial(name: str, signum: int, delay: float, min_time: float) -> Try:
    """Start `name`, send `signum` after `delay` seconds, and judge how it ended."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc = _start(commands(folder, min_time)[name])
        time.sleep(delay)
        finished_first = proc.poll() is not None
        if not finished_first:
            proc.send_signal(signum)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            return Try(name, signum, delay, -9, False, "did not exit within 120 s")
        word, code = SIGNALS[signum]
        lines = err.splitlines()
        problem = ""
        if finished_first or proc.returncode == 0:
            if proc.returncode != 0:
                problem = f"exit {proc.returncode} without a signal: {err.strip()[:200]}"
        elif proc.returncode != code:
            problem = f"exit {proc.returncode}, expected {code}: {err.strip()[-300:]!r}"
        elif lines not in ([word], [f"{word} (after all outputs were written)"]):
            problem = f"stderr {err.strip()[-300:]!r}, expected one line {word!r}"
        problem = problem or leftovers(folder)
        return Try(name, signum, delay, proc.returncode, finished_first, problem)


def run_tries(tries: int, seed: int, min_time: float, verbose: bool = True) -> list[Try]:
    """`tries` trials over the commands (run --report most often: it has the most phases)."""
    rng = random.Random(seed)
    names = ["run --report"] * 3 + ["sweep", "ops"]
    durations = {name: duration(name, min_time) for name in sorted(set(names))}
    earliest = interpreter_start()
    if verbose:
        shown = ", ".join(f"{n} {d:.1f} s" for n, d in sorted(durations.items()))
        print(f"uninterrupted: {shown}; bare interpreter start {earliest:.3f} s", flush=True)
    results = []
    for index in range(tries):
        name = rng.choice(names)
        signum = signal.SIGTERM if rng.random() < 0.2 else signal.SIGINT
        delay = rng.uniform(earliest, durations[name] * 1.05)
        result = trial(name, signum, delay, min_time)
        results.append(result)
        if verbose:
            state = "clean" if not result.problem else f"NOT CLEAN: {result.problem}"
            first = " (finished first)" if result.finished_first else ""
            print(
                f"{index + 1:3d} {name:13s} {signal.Signals(signum).name:7s} at {delay:5.2f} s "
                f"-> exit {result.returncode}{first}: {state}",
                flush=True,
            )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-time", type=float, default=0.2)
    args = parser.parse_args()
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    results = run_tries(args.tries, args.seed, args.min_time)
    clean = sum(not r.problem for r in results)
    signalled = sum(not r.finished_first and r.returncode != 0 for r in results)
    print(
        f"\n{clean}/{len(results)} clean ({signalled} ended by the signal, "
        f"{len(results) - signalled} finished first or before the signal took effect)"
    )
    return 0 if clean == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
