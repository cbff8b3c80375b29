"""Shared bits of the window benchmarks: which machine, how busy, percentiles, RSS."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    """`lscpu` model name and cores, plus the load average when the bench ran."""
    model = platform.processor() or "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores (load average {load} at the start)"


def percentiles(values: list[float], qs: tuple[float, ...] = (50, 99, 100)) -> list[float]:
    return [float(v) for v in np.percentile(np.asarray(values, dtype=float), qs)]


def rss_mb() -> float:
    """Resident set size of this process in MB (Linux /proc)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
