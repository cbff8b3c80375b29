"""The bytes a fused kernel holds inside one aten call, which a dispatch mode cannot see.

A dispatch mode (tensor_trace.py) sees an op's inputs and outputs; torch's transformer fast
path (nn.TransformerEncoderLayer and nn.MultiheadAttention in eval mode without gradients)
runs a whole attention block, or a whole encoder layer, as one aten call that allocates its
projections and the attention scores inside. The peaks below follow the CPU kernels
(aten/native/transformers: native_multi_head_attention_cpu, transformer_encoder_layer_forward),
checked against the allocations torch's profiler recorded (profile_memory) in each call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Inside:
    """One call's hidden memory: `peak_bytes` alive at once inside it beyond its inputs (its
    outputs included), of which `cast_bytes` are lower-precision copies of its weights that
    autocast's cast cache keeps until the autocast region ends."""

    peak_bytes: int
    cast_bytes: int = 0


def _named(func: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments by their schema names, defaults filled in."""
    names = [a.name for a in func._schema.arguments]
    named = {
        a.name: a.default_value if a.has_default_value() else None for a in func._schema.arguments
    }
    named.update(zip(names, args, strict=False))
    named.update(kwargs)
    return named


def attention_peak(
    sizes: tuple[int, int, int],
    heads: int,
    itemsize: int,
    masked: bool,
    weights: tuple[bool, bool] = (False, False),
) -> int:
    """Bytes native_multi_head_attention_cpu holds at once for a (batch, seq, d) query;
    `weights`: (need_weights, average_attn_weights).

    Its phases, in units of batch·seq·d: the packed q/k/v projection and its per-head copy (6);
    that copy and the batch·heads·seq² scores (3 + scores; a mask's softmax makes a second
    scores tensor); the copy, the context's transposed copy and the out-projection (5, plus the
    scores when the weights are returned); their mean over heads (4 + scores + batch·seq²).
    Measured (profile_memory) at batch 32, seq 256, d 256, 4 heads in float32: 56 MiB (3 × 8 +
    32); at seq 512 176 MiB, at d 512 96 MiB (6 × 16), weights averaged at seq 512 224 MiB.
    """
    batch, seq, d = sizes
    tokens = batch * seq * d
    scores = batch * heads * seq * seq
    need_weights, average = weights
    phases = [
        6 * tokens,
        3 * tokens + scores * (2 if masked else 1),
        5 * tokens + (scores if need_weights else 0),
    ]
    if need_weights and average:
        phases.append(4 * tokens + scores + batch * seq * seq)
    return itemsize * max(phases)


def _sizes(t: Any) -> tuple[int, int, int] | None:
    if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.is_nested:
        return None
    batch, seq, d = t.shape
    return int(batch), int(seq), int(d)


def _multi_head_attention(named: Mapping[str, Any], _autocast: torch.dtype | None) -> Inside:
    """The module's fast path. Under autocast the trace already saw its inputs cast (autocast
    casts this op's arguments before it is dispatched): they count as they were made."""
    query = named["query"]
    sizes = _sizes(query)
    if sizes is None:
        return Inside(0)
    peak = attention_peak(
        sizes,
        int(named["num_head"]),
        query.element_size(),
        named["mask"] is not None,
        (bool(named["need_weights"]), bool(named["average_attn_weights"])),
    )
    return Inside(peak)


def _encoder_layer(named: Mapping[str, Any], autocast: torch.dtype | None) -> Inside:
    """A whole encoder layer: its attention, then its feed-forward (the attention's output
    kept as the residual, the hidden batch·seq·ff, the second projection: ff + 2 units).

    This op is on no autocast list: it is dispatched as it came, and autocast meets the calls
    inside it. A float32 input is cast three times, as query, key and value (3 more units, in
    the lower dtype, which then runs the attention as three projections); the attention's
    weights are cast once and kept by the cast cache; each feed-forward weight is cast (its
    transpose is no leaf, so not cached) while its product runs. Measured under bfloat16
    autocast at batch 32, seq 256, d 256, 4 heads, ff 1024: 40.6 MiB (casts 12 + copy 12 +
    scores 16 + cached weights 0.5), against 56 MiB in float32; at batch 8, seq 128, d 768,
    12 heads, ff 3072: 18.2 MiB (cached 4.5 + casts 4.5 + projections 9)."""
    src = named["src"]
    sizes = _sizes(src)
    if sizes is None:
        return Inside(0)
    low = autocast if autocast is not None else src.dtype

    def cast(*names: str) -> list[int]:
        """Bytes of the low-precision copy of each named weight (0: no cast)."""
        return [named[n].numel() * low.itemsize * (named[n].dtype != low) for n in names]

    tokens = math.prod(sizes)
    before = tokens * src.element_size() if named["norm_first"] else 0
    casts = 3 * tokens * low.itemsize if src.dtype != low else 0
    masked = named["mask"] is not None
    attention = casts + attention_peak(sizes, int(named["num_heads"]), low.itemsize, masked)
    hidden = tokens // sizes[2] * int(named["ffn_weight_1"].shape[0])
    feed_forward = low.itemsize * (hidden + 2 * tokens) + max(cast("ffn_weight_1", "ffn_weight_2"))
    cached = sum(cast("qkv_weight", "qkv_bias", "proj_weight", "proj_bias"))
    return Inside(before + cached + max(attention, feed_forward), cached)


#: The fused kernels, by op: what each holds inside given its arguments and the trace's
#: autocast dtype (None: float32). An op not here holds nothing beyond its outputs.
_KERNELS: dict[Any, Callable[[Mapping[str, Any], torch.dtype | None], Inside]] = {
    torch.ops.aten._native_multi_head_attention: _multi_head_attention,
    torch.ops.aten._transformer_encoder_layer_fwd: _encoder_layer,
}


def inside(
    func: Any,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    autocast: torch.dtype | None,
) -> Inside | None:
    """What `func` called with these arguments holds inside (None: nothing the trace misses)."""
    kernel = _KERNELS.get(getattr(func, "overloadpacket", None))
    if kernel is None:
        return None
    return kernel(_named(func, args, kwargs), autocast)
