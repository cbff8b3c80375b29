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
import sys

_ALLOCATION = re.compile(r"tried to allocate (\d+) bytes", re.IGNORECASE)
#: What an allocator says when it refuses, as torch words it (CPU on Linux/macOS and Windows,
#: CUDA, and a C++ std::bad_alloc turned into RuntimeError). A message that merely contains
#: "out of memory" (a user's own RuntimeError) is not one of them.
_ALLOCATOR_WORDS = re.compile(
    r"DefaultCPUAllocator: (can't allocate|not enough) memory"
    r"|you tried to allocate \d+ bytes"
    r"|CUDA out of memory\. Tried to allocate"
    r"|^(std::)?bad_alloc$",
    re.IGNORECASE,
)


class OutOfMemory(MemoryError):
    """Memory ran out while measuring; str() is one line with the refused and estimated sizes."""

    def __init__(self, message: str, refused: int | None, estimate: int, budget: int) -> None:
        super().__init__(message)
        self.refused = refused
        self.estimate = estimate
        self.budget = budget


def is_out_of_memory(exc: BaseException) -> bool:
    """True for MemoryError and for an allocator refusing: torch's OutOfMemoryError, or a
    RuntimeError in the allocator's own words (never one that only says "out of memory")."""
    if isinstance(exc, MemoryError):
        return True
    if not isinstance(exc, RuntimeError):
        return False
    out_of_memory_error = getattr(sys.modules.get("torch"), "OutOfMemoryError", None)
    if isinstance(out_of_memory_error, type) and isinstance(exc, out_of_memory_error):
        return True
    return _ALLOCATOR_WORDS.search(str(exc).strip()) is not None


def refused_bytes(exc: BaseException) -> int | None:
    """The size the allocator refused, when its message names one."""
    match = _ALLOCATION.search(str(exc))
    return int(match.group(1)) if match else None
