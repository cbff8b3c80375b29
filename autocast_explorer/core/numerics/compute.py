"""What each layer computed in: the op trace's ops attributed to the layer that ran them.

A layer's output dtype says what it *returned*; a GRU returns float32 under autocast while the
matrix products inside it run in bfloat16. The op trace records, for every aten op, the module
whose forward was running (`OpRecord.module`); this module folds those records into one
`ComputeDtypes` per layer: op → dtype → count of the ops that did maths (casts counted apart,
views and shape ops left out), including the ops of the layers nested inside it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.optrace import OpRecord

#: Ops that only change a tensor's shape or layout, not its values: left out of the count.
SHAPE_OPS: frozenset[str] = frozenset(
    {
        "aten.t",
        "aten.view",
        "aten._unsafe_view",
        "aten.reshape",
        "aten.transpose",
        "aten.transpose_",
        "aten.t_",
        "aten.permute",
        "aten.expand",
        "aten.unsqueeze",
        "aten.squeeze",
        "aten.select",
        "aten.slice",
        "aten.split",
        "aten.split_with_sizes",
        "aten.unbind",
        "aten.chunk",
        "aten.unsafe_split",
        "aten.unsafe_chunk",
        "aten.narrow",
        "aten.alias",
        "aten.detach",
        "aten.contiguous",
        "aten.clone",
        "aten.flatten",
        "aten.as_strided",
        "aten.empty",
        "aten.empty_like",
        "aten.empty_strided",
        "aten.zeros",
        "aten.zeros_like",
        "aten.ones",
        "aten.new_empty",
        "aten.new_zeros",
        "aten.lift_fresh",
        "aten._to_copy",
        "aten.to",
        "aten.copy_",
        "aten.stack",
        "aten.cat",
    }
)
#: Ops that do a layer's heavy maths (matrix products, convolutions, fused kernels): the one a
#: summary names first for a dtype, ahead of the more numerous pointwise ops around them.
MATMUL_OPS: frozenset[str] = frozenset(
    {
        "aten.addmm",
        "aten._addmm_activation",
        "aten.mm",
        "aten.bmm",
        "aten.baddbmm",
        "aten.matmul",
        "aten.linear",
        "aten.addmv",
        "aten.mv",
        "aten.dot",
        "aten.convolution",
        "aten._convolution",
        "aten.mkldnn_convolution",
        "aten.mkldnn_rnn_layer",
        "aten._scaled_dot_product_flash_attention_for_cpu",
        "aten._scaled_dot_product_attention_math",
        "aten._native_multi_head_attention",
        "aten._transformer_encoder_layer_fwd",
    }
)
FLOAT_DTYPES: tuple[str, ...] = ("float64", "float32", "bfloat16", "float16")
#: The ops that multiply matrices (what autocast's lower list is mostly about), by the short
#: name both an aten op ('addmm') and a torch function in a Dynamo graph ('conv2d') go by.
PRODUCT_OPS: frozenset[str] = frozenset(
    {
        "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "convolution",
        "_convolution", "mkldnn_convolution", "mkldnn_rnn_layer", "conv1d", "conv2d", "conv3d",
        "_mkl_linear", "mkldnn_linear", "_native_multi_head_attention",
        "scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
    }
)  # fmt: skip


def packet(op: str) -> str:
    """'aten.addmm.default' → 'aten.addmm' (the op without its overload)."""
    parts = op.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else op


def short_op(op: str) -> str:
    """'aten.addmm.default' → 'addmm': the name a reader knows."""
    return packet(op).split(".", 1)[-1]


@dataclass(frozen=True)
class ComputeDtypes:
    """The ops one layer ran in one mode: op → output dtype → count, and its dtype casts.

    `ops` holds ops that computed values (no casts, views or shape ops), keyed by the full op
    name ('aten.addmm.default'); `casts` counts the dtype conversions dispatched inside it.
    """

    ops: dict[str, dict[str, int]] = field(default_factory=dict, hash=False)
    casts: int = 0

    def by_dtype(self) -> Counter[str]:
        """Floating dtype → how many computing ops produced it."""
        counts: Counter[str] = Counter()
        for dtypes in self.ops.values():
            for dtype, n in dtypes.items():
                if dtype in FLOAT_DTYPES:
                    counts[dtype] += n
        return counts

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The floating dtypes the layer computed in, most ops first."""
        return tuple(d for d, _ in self.by_dtype().most_common())

    def mixed(self, out_dtype: str) -> bool:
        """True when the layer computed in a dtype other than the one it returned."""
        return any(d != out_dtype for d in self.dtypes)

    def top_op(self, dtype: str) -> tuple[str, int]:
        """The op that ran most often in `dtype`, a matrix product or convolution ahead of any
        other op, and its count (('', 0) if none did)."""
        best = ("", 0, False)
        for op, dtypes in self.ops.items():
            n = dtypes.get(dtype, 0)
            heavy = packet(op) in MATMUL_OPS
            if n and (heavy, n) > (best[2], best[1]):
                best = (op, n, heavy)
        return best[0], best[1]

    def count(self, op: str, dtype: str) -> int:
        """How often `op` ('addmm' or 'aten.addmm.default') ran in `dtype`."""
        return sum(
            dtypes.get(dtype, 0)
            for name, dtypes in self.ops.items()
            if op in (name, packet(name), short_op(name))
        )

    def summary(self, out_dtype: str) -> str:
        """'65 addmm in bfloat16 · 74 casts · output float32' (the most frequent op per dtype,
        with how many other ops ran in it)."""
        parts = []
        counts = self.by_dtype()
        for dtype, total in counts.most_common():
            op, n = self.top_op(dtype)
            rest = total - n
            more = f" + {rest} other op{'s' if rest != 1 else ''}" if rest else ""
            parts.append(f"{n} {short_op(op)}{more} in {dtype}")
        if self.casts:
            parts.append(f"{self.casts} cast{'s' if self.casts != 1 else ''}")
        if out_dtype:
            parts.append(f"output {out_dtype}")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """The JSON's `compute_dtypes`: op → dtype → count."""
        return {op: dict(dtypes) for op, dtypes in self.ops.items()}

    def to_json(self) -> dict[str, Any]:
        """The two keys this adds to `layers[].<mode>`."""
        return {"compute_dtypes": self.to_dict(), "casts": self.casts}


def _owners(module: str) -> list[str]:
    """A module path and every module it is nested in: 'a.b.c' → ['a.b.c', 'a.b', 'a']."""
    if not module:
        return []
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def compute_by_layer(records: Iterable[OpRecord]) -> dict[str, ComputeDtypes]:
    """Layer name → what it computed in, counting the ops of every layer nested inside it."""
    ops: dict[str, dict[str, Counter[str]]] = {}
    casts: Counter[str] = Counter()
    for record in records:
        owners = _owners(record.module)
        if not owners:
            continue
        if record.cast:
            for owner in owners:
                casts[owner] += 1
            continue
        if packet(record.op) in SHAPE_OPS or not record.out_dtypes:
            continue
        dtype = record.out_dtypes[0]
        for owner in owners:
            ops.setdefault(owner, {}).setdefault(record.op, Counter())[dtype] += 1
    names = list(dict.fromkeys([*ops, *casts]))
    return {
        name: ComputeDtypes(
            {op: dict(c) for op, c in ops.get(name, {}).items()}, casts.get(name, 0)
        )
        for name in names
    }
