"""torch's intra-op thread count: the bound every command checks, and a block that sets it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from autocast_explorer.core.runtime.errors import ConfigError


def max_threads() -> int:
    """More threads than 4 × the logical cores only oversubscribes; far more and libgomp cannot
    allocate its pool and aborts the process, so the bound is checked before torch sees it."""
    return 4 * (os.cpu_count() or 1)


def validate_threads(threads: Any) -> None:
    """None (torch's default) or 1 … max_threads(); shared by every command that takes threads."""
    most = max_threads()
    is_int = isinstance(threads, int) and not isinstance(threads, bool)
    if threads is not None and (not is_int or not 1 <= threads <= most):
        raise ConfigError(
            "threads", f"must be an integer in 1 … {most} (4 × the logical cores; got {threads!r})"
        )


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[int]:
    """Use `threads` intra-op threads inside the block (None: torch's default)."""
    import torch  # here, not at import: the config imports this module and must not load torch

    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield torch.get_num_threads()
    finally:
        if threads is not None:
            torch.set_num_threads(previous)
