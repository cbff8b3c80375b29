"""The one way the explorer enters CPU autocast (or not, for the float32 mode), and the torch
dtypes its names stand for."""

from __future__ import annotations

import contextlib

import torch

TORCH_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


def autocast_context(dtype: torch.dtype | None) -> contextlib.AbstractContextManager[object]:
    """torch.autocast('cpu', dtype) or a no-op for the plain (float32) mode."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=dtype)
