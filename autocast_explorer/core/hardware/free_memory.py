"""The memory this machine has free right now, without torch (the window checks inputs with it
before torch has loaded)."""

from __future__ import annotations

import os
from pathlib import Path


def available_memory_bytes() -> int:
    """MemAvailable from /proc/meminfo; falls back to total physical memory."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30
