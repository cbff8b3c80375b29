"""Memory running out while measuring: its own outcome, never an autocast finding.

torch's CPU allocator raises `RuntimeError: DefaultCPUAllocator: can't allocate memory: you
tried to allocate N bytes`, Python raises MemoryError. Wherever the autocast side's errors are
turned into a finding (an op autocast cannot run is what the explorer shows), these are
re-raised instead: a forward that ran out of memory says nothing about autocast. The public
entry points (run, sweep, placements, training) turn them into OutOfMemory, whose message puts
what the allocator refused beside what the memory guard estimated.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig

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


def out_of_memory(config: ExperimentConfig, exc: BaseException, where: str = "") -> OutOfMemory:
    """The OutOfMemory for `exc`, its message naming the guard's estimate and budget (and
    `where`, e.g. a sweep's point)."""
    if isinstance(exc, OutOfMemory):
        return exc
    from autocast_explorer.core.experiment.guards import (
        estimate_peak_bytes,
        estimate_training_peak_bytes,
        memory_budget_bytes,
    )

    training = config.mode == "train"
    estimate = (estimate_training_peak_bytes if training else estimate_peak_bytes)(config)
    budget = memory_budget_bytes(config)
    refused = refused_bytes(exc)
    asked = f"the allocator refused {_mb(refused)}" if refused else "memory ran out"
    at = f" at {where}" if where else ""
    message = (
        f"out of memory{at}: {asked}; the memory guard estimated a peak of {_mb(estimate)} "
        f"against a budget of {_mb(budget)} (the process may be limited below that, e.g. "
        "ulimit -v); use smaller sizes or batch"
    )
    return OutOfMemory(message, refused, estimate, budget)


def _mb(count: int) -> str:
    return f"{count / 2**20:,.0f} MB" if count >= 2**20 else f"{count / 2**20:,.2f} MB"


@contextlib.contextmanager
def memory_outcome(config: ExperimentConfig, where: str = "") -> Iterator[None]:
    """Turn running out of memory inside the block into OutOfMemory (other errors pass)."""
    try:
        yield
    except (MemoryError, RuntimeError) as exc:
        if not is_out_of_memory(exc):
            raise
        raise out_of_memory(config, exc, where) from None
