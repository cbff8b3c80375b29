"""Do the plain and autocast predictions agree, and by how much do the logits differ?"""

from __future__ import annotations

from typing import Annotated, TypedDict

import torch
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
    Fraction,
    Measured,
    MeasuredNonNegative,
    MultilineText,
    NonNegative,
    Numbers,
    Whole,
    Wholes,
    refuse,
)
from autocast_explorer.core.documents.model import Part
from autocast_explorer.core.numerics.flips import (
    Flip,
    MarginBin,
    TopK,
    flip_rate_by_margin,
    flipped_rows,
    topk_agreement,
)

HISTOGRAM_BINS = 30


class Histogram(Part):
    """Counts of |plain − autocast| over all logits; len(edges) == len(counts) + 1."""

    edges: Numbers
    counts: Wholes


class Agreement(Part):
    """The result's `agreement`: counts whole, fractions in 0 … 1, differences null when not
    finite; the deeper keys (topk, flips, flip_rate_by_margin) are absent in older files."""

    rows: Whole
    agree: Whole
    fraction: Fraction
    #: NaN when not finite (written as null).
    max_abs_diff: MeasuredNonNegative
    mean_abs_diff: MeasuredNonNegative
    allclose: Flag
    atol: NonNegative
    rtol: NonNegative = 1e-5
    cosine: Measured
    histogram: Histogram
    # Deeper agreement (core/numerics/flips.py): None/empty in files written before it existed.
    topk: TopK | None = None
    flips: tuple[Flip, ...] = ()
    margin_bins: Annotated[tuple[MarginBin, ...], Field(alias="flip_rate_by_margin")] = ()
    #: Why there is no argmax (the output is not batch × classes logits): then rows and agree
    #: are 0 and only the closeness measures (cosine, differences, allclose) apply.
    no_argmax_reason: Annotated[
        MultilineText,
        Field(
            description="present when the output is not batch × classes logits: "
            "rows and agree are 0"
        ),
    ] = ""

    @model_validator(mode="after")
    def _agree_within_rows(self) -> Agreement:
        if self.agree > self.rows:
            raise refuse("expected at most `rows`", at="agree")
        return self


def abs_diff_histogram(diff: torch.Tensor, bins: int = HISTOGRAM_BINS) -> Histogram:
    """Linear bins from 0 to the largest |diff| (a single bin [0, 1e-12] if all are equal)."""
    values = diff.flatten().double()
    top = float(values.max()) if values.numel() else 0.0
    top = top if top > 0 else 1e-12
    counts = torch.histc(values, bins=bins, min=0.0, max=top)
    edges = torch.linspace(0.0, top, bins + 1)
    return Histogram(
        edges=tuple(float(e) for e in edges), counts=tuple(int(c) for c in counts.round())
    )


class _Closeness(TypedDict):
    """The measures every comparison has, argmax or not."""

    max_abs_diff: float
    mean_abs_diff: float
    allclose: bool
    atol: float
    rtol: float
    cosine: float
    histogram: Histogram


def compare_logits(
    plain: torch.Tensor,
    auto: torch.Tensor,
    atol: float,
    rtol: float,
    topk: int = 5,
    no_argmax_reason: str = "",
) -> Agreement:
    """Argmax and top-k agreement per row, flipped rows, elementwise closeness (float32 copies).

    With `no_argmax_reason` (an output that is not batch × classes logits) only the closeness."""
    reference = plain.float()
    low = auto.float()
    diff = (reference - low).abs()
    cosine = torch.nn.functional.cosine_similarity(
        reference.flatten().double(), low.flatten().double(), dim=0
    )
    close = _Closeness(
        max_abs_diff=float(diff.max()) if diff.numel() else 0.0,
        mean_abs_diff=float(diff.mean()) if diff.numel() else 0.0,
        allclose=bool(torch.allclose(reference, low, atol=atol, rtol=rtol)),
        atol=atol,
        rtol=rtol,
        cosine=float(cosine),
        histogram=abs_diff_histogram(diff),
    )
    if no_argmax_reason:
        return Agreement(rows=0, agree=0, fraction=1.0, no_argmax_reason=no_argmax_reason, **close)
    rows = reference.shape[0]
    agree = int((reference.argmax(dim=1) == low.argmax(dim=1)).sum())
    return Agreement(
        rows=rows,
        agree=agree,
        fraction=agree / rows if rows else 1.0,
        topk=topk_agreement(reference, low, topk),
        flips=flipped_rows(reference, low),
        margin_bins=flip_rate_by_margin(reference, low),
        **close,
    )
