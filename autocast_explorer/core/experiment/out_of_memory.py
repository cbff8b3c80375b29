"""Memory running out while measuring: its own outcome, never an autocast finding.

torch's CPU allocator raises `RuntimeError: DefaultCPUAllocator: can't allocate memory: you
tried to allocate N bytes`, Python raises MemoryError. Wherever the autocast side's errors are
turned into a finding (an op autocast cannot run is what the explorer shows), these are
re-raised instead: a forward that ran out of memory says nothing about autocast. The public
entry points (run, sweep, placements, training) turn them into OutOfMemory
(guards.memory_outcome), whose message puts what the allocator refused beside what the memory
guard estimated.
"""

from __future__ import annotations

import re

_ALLOCATION = re.compile(r"tried to allocate (\d+) bytes", re.IGNORECASE)
_MARKERS = ("can't allocate memory", "out of memory", "not enough memory", "bad_alloc")


class OutOfMemory(MemoryError):
    """Memory ran out while measuring; str() is one line with the refused and estimated sizes."""

    def __init__(self, message: str, refused: int | None, estimate: int, budget: int) -> None:
        super().__init__(message)
        self.refused = refused
        self.estimate = estimate
        self.budget = budget


def is_out_of_memory(exc: BaseException) -> bool:
    """True for MemoryError and for torch's allocator refusing (a RuntimeError saying so)."""
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, RuntimeError) and any(m in str(exc).lower() for m in _MARKERS)


def refused_bytes(exc: BaseException) -> int | None:
    """The size the allocator refused, when its message names one."""
    match = _ALLOCATION.search(str(exc))
    return int(match.group(1)) if match else None
