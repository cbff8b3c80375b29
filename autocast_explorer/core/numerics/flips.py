"""Which predictions autocast changed, and why those rows: top-k agreement, flips, margins.

Definitions (shared by the window, the CLI and the JSON):

- A row *flipped* when argmax of the autocast logits differs from argmax of the float32 logits.
- A row's *margin* is its float32 top-1 logit minus its top-2 logit (≥ 0): how far the float32
  winner was ahead. Small margins are where low-precision noise can reorder the top two.
- *Top-k agreement* (`contains`): the float32 top-1 class is among autocast's k highest logits.
  *Top-k overlap*: |float32 top-k ∩ autocast top-k| / k, averaged over rows (1 = same k classes).
  k is capped at the number of classes.
- *Flip rate by margin*: rows sorted by float32 margin and cut into bins of (nearly) equal row
  count, so every bar of the chart rests on the same number of rows; each bin reports its margin
  range, rows, flips and flips/rows.
"""

from __future__ import annotations

from typing import Annotated, Any

import torch
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    Fraction,
    NonNegative,
    PositiveWhole,
    UnboundedNonNegative,
    Whole,
    refuse,
)
from autocast_explorer.core.documents.model import Part, dump, read

#: At most this many flipped rows are listed (all are counted: rows − agree).
MAX_FLIPS_LISTED = 1000
#: The flip-rate chart has at most this many bins.
MARGIN_BINS = 10


class Flip(Part):
    """One row whose predicted class changed under autocast (one entry of `agreement.flips`)."""

    row: Whole
    plain_class: Annotated[Whole, Field(alias="plain", description="float32's predicted class")]
    autocast_class: Annotated[
        Whole, Field(alias="autocast", description="autocast's predicted class")
    ]
    #: inf when the logits overflowed (JSON has no infinities: written as null).
    margin: Annotated[UnboundedNonNegative, Field(description="float32 top-1 − top-2 logit")]

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "flip") -> Flip:
        return read(cls, data, at=path)


class MarginBin(Part):
    """Rows whose float32 margin lies in [low, high], and how many of them flipped (one entry of
    `agreement.flip_rate_by_margin`)."""

    low: UnboundedNonNegative
    high: UnboundedNonNegative
    rows: Whole
    flips: Whole
    #: flips / rows, written for readers of the file; computed when not given.
    rate: NonNegative = 0.0

    @model_validator(mode="before")
    @classmethod
    def _rate_from_counts(cls, data: Any) -> Any:
        if isinstance(data, dict) and "rate" not in data:
            rows, flips = data.get("rows"), data.get("flips")
            if isinstance(rows, int) and isinstance(flips, int):
                data = {**data, "rate": flips / rows if rows else 0.0}
        return data

    @model_validator(mode="after")
    def _flips_within_rows(self) -> MarginBin:
        if self.flips > self.rows:
            raise refuse("expected at most `rows`", at="flips")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "bin") -> MarginBin:
        return read(cls, data, at=path)


class TopK(Part):
    """Top-k agreement over all rows (`agreement.topk`; see the module docstring for both
    measures): both are fractions of rows."""

    k: PositiveWhole
    contains: Whole
    fraction: Fraction
    overlap: Fraction

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "topk") -> TopK:
        return read(cls, data, at=path)


def margins(logits: torch.Tensor) -> torch.Tensor:
    """float32 top-1 minus top-2 logit per row (float64); 0 for a single class."""
    values = logits.detach().double()
    if values.shape[1] < 2:
        return torch.zeros(values.shape[0], dtype=torch.float64)
    top2 = values.topk(2, dim=1).values
    return top2[:, 0] - top2[:, 1]


def topk_agreement(plain: torch.Tensor, auto: torch.Tensor, k: int) -> TopK:
    """Both top-k measures for k capped at the number of classes."""
    rows, classes = plain.shape
    k = max(1, min(k, classes))
    plain_top = plain.float().topk(k, dim=1).indices
    auto_top = auto.float().topk(k, dim=1).indices
    contains = int((auto_top == plain_top[:, :1]).any(dim=1).sum())
    shared = (plain_top.unsqueeze(2) == auto_top.unsqueeze(1)).any(dim=2).sum(dim=1)
    overlap = float(shared.double().mean() / k) if rows else 1.0
    return TopK(k=k, contains=contains, fraction=contains / rows if rows else 1.0, overlap=overlap)


def flip_count(plain: torch.Tensor, auto: torch.Tensor) -> int:
    """How many rows flipped (all of them, where `flipped_rows` lists the first few)."""
    return int((plain.float().argmax(dim=1) != auto.float().argmax(dim=1)).sum())


def flipped_rows(
    plain: torch.Tensor, auto: torch.Tensor, limit: int = MAX_FLIPS_LISTED
) -> tuple[Flip, ...]:
    """The first `limit` flipped rows in row order, with classes and float32 margin."""
    plain_class = plain.float().argmax(dim=1)
    auto_class = auto.float().argmax(dim=1)
    margin = margins(plain)
    rows = torch.nonzero(plain_class != auto_class).flatten()[:limit]
    return tuple(
        Flip(
            row=int(r),
            plain_class=int(plain_class[r]),
            autocast_class=int(auto_class[r]),
            margin=float(margin[r]),
        )
        for r in rows
    )


def flip_rate_by_margin(
    plain: torch.Tensor, auto: torch.Tensor, bins: int = MARGIN_BINS
) -> tuple[MarginBin, ...]:
    """Equal-count bins of rows sorted by float32 margin, with the flips in each."""
    rows = plain.shape[0]
    if rows == 0:
        return ()
    margin = margins(plain)
    flipped = plain.float().argmax(dim=1) != auto.float().argmax(dim=1)
    order = torch.argsort(margin, stable=True)
    sorted_margin = margin[order]
    sorted_flipped = flipped[order]
    count = max(1, min(bins, rows))
    result = []
    for chunk_margin, chunk_flipped in zip(
        torch.tensor_split(sorted_margin, count),
        torch.tensor_split(sorted_flipped, count),
        strict=True,
    ):
        result.append(
            MarginBin(
                low=float(chunk_margin[0]),
                high=float(chunk_margin[-1]),
                rows=int(chunk_margin.numel()),
                flips=int(chunk_flipped.sum()),
            )
        )
    return tuple(result)
