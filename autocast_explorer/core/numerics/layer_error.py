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
from dataclasses import dataclass
from typing import Annotated, Any

import torch
from pydantic import Field

from autocast_explorer.core.documents.field_types import Flag, NullableNumber, Whole
from autocast_explorer.core.documents.model import Part, build, dump, read


class LayerErrorPart(Part):
    """A layer's `error` object: null where a value was not finite (older files lack keys)."""

    max_abs: NullableNumber = None
    mean_abs: NullableNumber = 0.0
    mean_rel: Annotated[NullableNumber, Field(description="mean|ref−low| ÷ mean|ref|")] = None
    sqnr_db: Annotated[
        NullableNumber, Field(description="null when not finite (identical: +∞)")
    ] = None
    cosine: NullableNumber = None
    identical: Flag = False
    numel: Whole = 0
    nonfinite: Whole = 0


@dataclass(frozen=True)
class LayerError:
    """Error of one layer's autocast output against its float32 output (see module docstring).

    `nonfinite` counts values that are finite in float32 but inf/NaN in the autocast output
    (float16 overflows above 65504); when it is non-zero the other metrics are inf or NaN.
    """

    max_abs: float
    mean_abs: float
    mean_rel: float
    sqnr_db: float
    cosine: float
    identical: bool
    numel: int
    nonfinite: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> LayerErrorPart:
        return build(
            LayerErrorPart,
            max_abs=_finite_or_none(self.max_abs),
            mean_abs=_finite_or_none(self.mean_abs),
            mean_rel=_finite_or_none(self.mean_rel),
            sqnr_db=_finite_or_none(self.sqnr_db),
            cosine=_finite_or_none(self.cosine),
            identical=self.identical,
            numel=self.numel,
            nonfinite=self.nonfinite,
        )

    @classmethod
    def from_dict(cls, data: Any, path: str = "error") -> LayerError:
        return cls.from_part(read(LayerErrorPart, data, at=path))

    @classmethod
    def from_part(cls, part: LayerErrorPart) -> LayerError:
        """null becomes the non-finite value the other fields imply (module docstring)."""
        nan = math.nan if part.nonfinite else None
        return cls(
            max_abs=_none_to(part.max_abs, math.inf),
            mean_abs=_none_to(part.mean_abs, math.inf),
            mean_rel=_none_to(part.mean_rel, nan if nan is not None else math.inf),
            sqnr_db=_none_to(
                part.sqnr_db,
                math.inf if part.identical else (nan if nan is not None else -math.inf),
            ),
            cosine=_none_to(part.cosine, math.nan),
            identical=part.identical,
            numel=part.numel,
            nonfinite=part.nonfinite,
        )


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _none_to(value: float | None, fallback: float) -> float:
    return fallback if value is None else value


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
        return LayerError(0.0, 0.0, 0.0, math.inf, 1.0, True, 0)
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
