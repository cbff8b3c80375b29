"""The peak of this process's resident memory over a stretch of work, above where it started.

What the memory guard's estimate is checked against (the result's `guard.memory_peak_mb`).
Linux keeps the peak (VmHWM in /proc/self/status) and lets a process reset it to the present
level (writing 5 to /proc/self/clear_refs), so the peak of one run is read exactly, without
sampling. Elsewhere, or where the reset is refused, there is no figure (None).
"""

from __future__ import annotations

from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_bytes(key: str) -> int | None:
    """A '<key>: <n> kB' line of /proc/self/status, in bytes (None: not there)."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class PeakMemory:
    """Started on construction: `stop()` is the peak resident bytes since, above the level at
    the start (None where the system does not tell)."""

    def __init__(self) -> None:
        self._start = _status_bytes("VmRSS")
        try:
            _CLEAR_REFS.write_text("5")
            self._reset = True
        except OSError:
            self._reset = False

    def stop(self) -> int | None:
        peak = _status_bytes("VmHWM")
        if not self._reset or peak is None or self._start is None:
            return None
        return max(0, peak - self._start)
