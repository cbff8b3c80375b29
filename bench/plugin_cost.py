"""What the tester's kit costs a pytest session that does not use it, side by side.

The kit is installed the way a wheel installs it: a dist-info folder whose entry_points.txt
names it under `pytest11`, on the path of both sessions, so pytest scans the same entry points
in both. Each round runs the same one-test session (a plain `assert`, no Qt) twice as fresh
processes, in alternating order: once as installed (the kit loads) and once with it blocked
(`-p no:autocast_explorer.testing`). The figure is the median over rounds of with/without
(target ≤ 1.05: an installed kit must not slow a session that never asks for its fixtures).

    .venv/bin/python bench/plugin_cost.py [--rounds 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from window_common import ROOT, machine

PLUGIN = "autocast_explorer.testing"


def install_entry_point(site: Path) -> None:
    """What the wheel's metadata adds: the pytest11 entry point (the code stays in ROOT)."""
    info = site / "autocast_explorer_kit_bench-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: autocast-explorer-kit-bench\n")
    (info / "entry_points.txt").write_text(f"[pytest11]\n{PLUGIN} = {PLUGIN}\n")


def session_seconds(folder: Path, site: Path, options: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]))
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    assert "1 passed" in out.stdout, out.stdout
    return elapsed


def kit_loads(folder: Path, site: Path, options: list[str]) -> bool:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]))
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--fixtures", "-p", "no:cacheprovider", *options],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    return "explorer_user_files" in out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    print(f"Machine: {machine()}; Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        folder, site = Path(tmp) / "project", Path(tmp) / "site"
        folder.mkdir()
        (folder / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
        install_entry_point(site)
        blocked = ["-p", f"no:{PLUGIN}"]
        sessions = {"with": [], "without": blocked}
        assert kit_loads(folder, site, []) and not kit_loads(folder, site, blocked)
        session_seconds(folder, site, [])  # warm the disk cache and the bytecode
        ratios, with_kit, without = [], [], []
        for i in range(args.rounds):
            order = ("with", "without") if i % 2 == 0 else ("without", "with")
            times = {name: session_seconds(folder, site, sessions[name]) for name in order}
            with_kit.append(times["with"])
            without.append(times["without"])
            ratios.append(with_kit[-1] / without[-1])
    print(
        f"session with the kit / without: median {statistics.median(ratios):.3f} "
        f"(medians {statistics.median(with_kit):.3f} s vs {statistics.median(without):.3f} s, "
        f"{args.rounds} rounds)"
    )


if __name__ == "__main__":
    main()
