"""How much precision a layer gives up: error metrics of a low-precision tensor against float32.

Definitions (the same on screen, in the CLI and in the JSON), with ref the float32 output and low
the autocast output converted to float32 (exactly: every bfloat16/float16 value is a float32):

- max_abs:  max |ref − low|
- mean_abs: mean |ref − low|
- mean_rel: mean |ref − low| ÷ mean |ref| — a ratio of means, not a mean of elementwise ratios,
  because after ReLU many reference values are exactly 0 and an elementwise ratio would divide
  by zero (or by an arbitrary floor) there. 0 when ref and low are identical; +inf when ref is
  all zeros but low is not.
- sqnr_db:  10·log10(mean(ref²) / mean((ref − low)²)), signal-to-quantisation-noise ratio.
  +inf when the outputs are identical (no noise); −inf when ref is all zeros but low is not.
- cosine:   ref·low / (|ref|·|low|) over the flattened tensors; 1 when both are all zeros,
  0 when exactly one is.

Sums and products are taken in float64 so the metric itself adds no error worth mentioning.
JSON cannot hold infinities, so `to_dict` writes null for a non-finite value; the other fields
say which it was: `identical` → +inf SQNR (and 0 relative error); `nonfinite` > 0 → NaN/inf
from an overflowed autocast output; otherwise the reference was all zeros (−inf SQNR, +inf
relative error).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import torch
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import Flag, Measured, Whole
from autocast_explorer.core.documents.model import Part, dump, read


def _implied() -> Any:
    """The default of a number a file may leave out: what the other fields imply (see
    `_null_as_implied`); the schema says null."""
    return Field(default=math.nan, json_schema_extra={"default": None})


class LayerError(Part):
    """A layer's `error` object: null where a value was not finite (older files lack keys)."""

    # Error of one layer's autocast output against its float32 output (module docstring).
    # `nonfinite` counts values that are finite in float32 but inf/NaN in the autocast output
    # (float16 overflows above 65504); when it is non-zero the other metrics are inf or NaN.
    max_abs: Measured = _implied()
    mean_abs: Measured = 0.0
    mean_rel: Annotated[Measured, Field(description="mean|ref−low| ÷ mean|ref|")] = _implied()
    sqnr_db: Annotated[Measured, Field(description="null when not finite (identical: +∞)")] = (
        _implied()
    )
    cosine: Measured = _implied()
    identical: Flag = False
    numel: Whole = 0
    nonfinite: Whole = 0

    @model_validator(mode="before")
    @classmethod
    def _null_as_implied(cls, data: Any) -> Any:
        """null (or, but for mean_abs, absent) becomes the non-finite value the other fields
        imply (module docstring)."""
        if not isinstance(data, dict):
            return data
        overflowed = bool(data.get("nonfinite"))
        implied = {
            "max_abs": math.inf,
            "mean_abs": math.inf,
            "mean_rel": math.nan if overflowed else math.inf,
            "sqnr_db": math.inf
            if data.get("identical") is True
            else (math.nan if overflowed else -math.inf),
            "cosine": math.nan,
        }
        missing = {
            key: value
            for key, value in implied.items()
            if data.get(key) is None and (key in data or key != "mean_abs")
        }
        return {**data, **missing} if missing else data

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "error") -> LayerError:
        return read(cls, data, at=path)


_CHUNK = 1 << 20


def _sum_products(a: torch.Tensor, b: torch.Tensor) -> float:
    """sum(a·b) in float64, a million elements at a time (bounded memory, no float32 underflow)."""
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    total = 0.0
    for start in range(0, flat_a.numel(), _CHUNK):
        chunk_a = flat_a[start : start + _CHUNK].double()
        chunk_b = flat_b[start : start + _CHUNK].double()
        total += float(torch.dot(chunk_a, chunk_b))
    return total


def layer_error(reference: torch.Tensor, low: torch.Tensor) -> LayerError:
    """Compare `low` (any float dtype) with the float32 `reference` of the same shape."""
    if reference.shape != low.shape:
        raise ValueError(f"shapes differ: {tuple(reference.shape)} vs {tuple(low.shape)}")
    ref = reference.detach().float()
    other = low.detach().float()
    n = ref.numel()
    if n == 0:
        return LayerError(
            max_abs=0.0,
            mean_abs=0.0,
            mean_rel=0.0,
            sqnr_db=math.inf,
            cosine=1.0,
            identical=True,
            numel=0,
            nonfinite=0,
        )
    identical = bool(torch.equal(ref, other))
    nonfinite = int((torch.isfinite(ref) & ~torch.isfinite(other)).sum())
    diff = ref - other
    abs_diff = diff.abs()
    sum_abs_diff = float(torch.sum(abs_diff, dtype=torch.float64))
    sum_abs_ref = float(torch.sum(ref.abs(), dtype=torch.float64))
    signal = _sum_products(ref, ref)
    noise = _sum_products(diff, diff)
    norm_other = _sum_products(other, other)

    if identical:
        mean_rel, sqnr = 0.0, math.inf
    elif math.isnan(noise) or math.isnan(signal):
        mean_rel, sqnr = sum_abs_diff / sum_abs_ref if sum_abs_ref else math.nan, math.nan
    else:
        mean_rel = sum_abs_diff / sum_abs_ref if sum_abs_ref > 0 else math.inf
        if signal == 0.0 or math.isinf(noise):
            sqnr = -math.inf
        else:
            sqnr = 10.0 * math.log10(signal / noise)
    if signal == 0.0 and norm_other == 0.0:
        cosine = 1.0
    elif signal == 0.0 or norm_other == 0.0:
        cosine = 0.0
    elif not (math.isfinite(signal) and math.isfinite(norm_other)):
        cosine = math.nan
    else:
        cosine = _sum_products(ref, other) / math.sqrt(signal * norm_other)
        cosine = max(-1.0, min(1.0, cosine))
    return LayerError(
        max_abs=float(abs_diff.max()),
        mean_abs=sum_abs_diff / n,
        mean_rel=mean_rel,
        sqnr_db=sqnr,
        cosine=cosine,
        identical=identical,
        numel=n,
        nonfinite=nonfinite,
    )
