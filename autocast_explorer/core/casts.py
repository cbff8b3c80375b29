"""Counting the dtype casts torch really performs, with a TorchDispatchMode.

A dispatch mode sees every aten op below autograd and autocast, so the weight and input casts
that autocast inserts show up as ops (`aten._to_copy` under no_grad; `aten.to` under
inference_mode). Counting them is how the explorer shows the casts, rather than assuming them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from autocast_explorer.core.model import dtype_name

#: aten ops that produce a copy of a tensor in another dtype.
CAST_OPS: frozenset[str] = frozenset(
    {"_to_copy", "to", "_to_dtype", "to_dtype", "convert_element_type"}
)


@dataclass(frozen=True)
class CastRecord:
    """One observed cast: op, source shape and size, source and target dtype, bytes in/out."""

    op: str
    shape: tuple[int, ...]
    numel: int
    from_dtype: str
    to_dtype: str
    bytes_read: int
    bytes_written: int


@dataclass
class CastLog:
    """The casts seen while a `CastCounter` was active."""

    casts: list[CastRecord] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.casts)

    @property
    def bytes(self) -> int:
        """Bytes of source data converted (the cast ops' inputs)."""
        return sum(c.bytes_read for c in self.casts)

    def ops(self) -> dict[str, int]:
        return dict(Counter(c.op for c in self.casts))


def _op_name(func: Any) -> str:
    """'aten._to_copy.default' -> '_to_copy'."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    return name.split(".")[-1] if "." in name else name


class CastCounter(TorchDispatchMode):
    """Records every op that turns a tensor into a tensor of another floating dtype."""

    def __init__(self) -> None:
        super().__init__()
        self.log = CastLog()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        if _op_name(func) in CAST_OPS and args and isinstance(args[0], torch.Tensor):
            src = args[0]
            if isinstance(out, torch.Tensor) and out.dtype != src.dtype:
                self.log.casts.append(
                    CastRecord(
                        op=f"aten.{_op_name(func)}",
                        shape=tuple(src.shape),
                        numel=src.numel(),
                        from_dtype=dtype_name(src.dtype),
                        to_dtype=dtype_name(out.dtype),
                        bytes_read=src.numel() * src.element_size(),
                        bytes_written=out.numel() * out.element_size(),
                    )
                )
        return out
