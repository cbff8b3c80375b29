"""torch's intra-op thread count for the length of a block (set in the calling thread)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[int]:
    """Use `threads` intra-op threads inside the block (None: torch's default)."""
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield torch.get_num_threads()
    finally:
        if threads is not None:
            torch.set_num_threads(previous)
