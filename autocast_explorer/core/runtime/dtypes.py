"""The autocast dtypes the explorer offers and their spelling in JSON and on screen.

Names only, no torch: the config (and so the window's first paint) imports this module;
runtime.autocast maps the names to torch dtypes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

#: The lower-precision dtypes CPU autocast accepts, as named in configs and documents.
DTYPES: tuple[str, ...] = ("bfloat16", "float16")


def dtype_name(dtype: torch.dtype) -> str:
    """'torch.bfloat16' -> 'bfloat16' (the spelling used in JSON and on screen)."""
    return str(dtype).removeprefix("torch.")
