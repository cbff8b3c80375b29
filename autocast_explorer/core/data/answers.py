"""Does autocast change the answers? Held-out predictions in float32 and under autocast, compared.

Works on any classifier (`nn.Module`) and rows reshaped to the input it takes, so a user's model
fits as well as ours. The accuracy difference gets a 95% paired-bootstrap interval: rows are
resampled together, so both copies are always scored on the same rows.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated, ClassVar

import numpy as np
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    Fraction,
    NonNegative,
    Numbers,
    Text,
    Whole,
    refuse,
)
from autocast_explorer.core.documents.model import Part

if TYPE_CHECKING:
    import torch

#: Bootstrap resamples for the interval, its confidence, and the RNG stream it draws from.
RESAMPLES = 2000
CONFIDENCE = 0.95
BOOTSTRAP_SEED_OFFSET = 15485863
#: Flipped rows kept in a result (the count of all of them is kept too).
MAX_FLIPPED = 200
#: A flipped row keeps its values (for drawing) when it has at most this many.
MAX_STORED_ROW = 4096
#: Rows per forward while evaluating (bounded memory whatever the data set's size).
EVAL_BATCH = 512


class FlippedRow(Part):
    """A held-out row whose predicted class differs between float32 and autocast."""

    # A margin is the top logit minus the runner-up in that copy's own logits (small: the
    # answer was nearly a tie). `x` is empty (and not written) for a row too big to keep.

    schema_name: ClassVar[str] = "flipped"

    index: Annotated[Whole, Field(description="the row's position in the data file")]
    label: Whole
    plain: Annotated[Whole, Field(description="float32's predicted class")]
    autocast: Annotated[Whole, Field(description="autocast's predicted class")]
    plain_margin: Annotated[
        NonNegative, Field(description="top logit minus the runner-up, float32")
    ]
    autocast_margin: Annotated[
        NonNegative, Field(description="top logit minus the runner-up, autocast")
    ]
    x: Annotated[
        Numbers,
        Field(
            description="the row's values (for drawing), when small enough",
            exclude_if=lambda values: not values,
        ),
    ] = ()


class AccuracyReport(Part):
    """real data: held-out answers in float32 and under autocast"""

    # Held-out accuracy of one trained model in float32 and under autocast; the result's
    # `accuracy` object. `interval` bounds autocast − float32 accuracy (95%, paired bootstrap).
    schema_name: ClassVar[str] = "accuracy"

    plain: Annotated[Fraction, Field(description="held-out accuracy in float32")]
    autocast: Annotated[Fraction, Field(description="held-out accuracy under autocast")]
    rows: Whole = 0
    dtype: Annotated[Text, Field(description="the autocast dtype")] = ""
    flipped: tuple[FlippedRow, ...] = Field(
        description="rows whose predicted class changed (at most 200)"
    )
    flipped_total: Annotated[Whole, Field(description="all rows whose predicted class changed")] = 0
    #: (low, high).
    interval: Annotated[
        Numbers, Field(description="95% paired-bootstrap interval of autocast − float32 accuracy")
    ] = Field(json_schema_extra={"minItems": 2, "maxItems": 2})

    @model_validator(mode="after")
    def _interval_and_count(self) -> AccuracyReport:
        if len(self.interval) != 2 or self.interval[0] > self.interval[1]:
            raise refuse("expected [low, high] with low ≤ high", at="interval")
        if self.flipped_total < len(self.flipped):
            raise refuse("expected at least the flipped rows listed", at="flipped_total")
        return self

    @property
    def difference(self) -> float:
        return self.autocast - self.plain

    def confusion(self) -> dict[tuple[int, int], int]:
        """How often float32's answer p became autocast's answer a, over the flips kept."""
        return dict(Counter((f.plain, f.autocast) for f in self.flipped))


def predict(
    model: torch.nn.Module,
    shape: tuple[int, ...],
    x: np.ndarray,
    dtype: torch.dtype | None,
) -> np.ndarray:
    """float32 logits of `model` on rows `x` reshaped to (-1, *shape); autocast when `dtype`."""
    import torch

    from autocast_explorer.core.runtime.autocast import autocast_context

    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, x.shape[0], EVAL_BATCH):
            batch = torch.from_numpy(np.ascontiguousarray(x[start : start + EVAL_BATCH]))
            with autocast_context(dtype):
                logits = model(batch.reshape(-1, *shape))
            out.append(logits.float().reshape(logits.shape[0], -1).numpy())
    return np.concatenate(out)


def margins(logits: np.ndarray) -> np.ndarray:
    """Top logit minus the runner-up, per row (0 for a single output)."""
    if logits.shape[1] < 2:
        return np.zeros(logits.shape[0], dtype=np.float64)
    top2 = np.sort(logits, axis=1)[:, -2:]
    gap: np.ndarray = top2[:, 1] - top2[:, 0]
    return gap.astype(np.float64)


def compare_answers(
    labels: np.ndarray,
    plain: np.ndarray,
    autocast: np.ndarray,
    dtype: str,
    seed: int,
    rows: np.ndarray | None = None,
    index: np.ndarray | None = None,
) -> AccuracyReport:
    """Both accuracies, the flipped rows, and the interval of their difference.

    `rows` are the inputs (kept for drawing flips), `index` each row's position in the file.
    A non-finite logit (float16 overflow) makes that row's answer argmax of what is finite.
    """
    plain = np.nan_to_num(plain, nan=-np.inf)
    autocast = np.nan_to_num(autocast, nan=-np.inf)
    pred_p, pred_a = plain.argmax(axis=1), autocast.argmax(axis=1)
    right_p, right_a = pred_p == labels, pred_a == labels
    changed = np.flatnonzero(pred_p != pred_a)
    m_p, m_a = _finite(margins(plain)), _finite(margins(autocast))
    index = np.arange(labels.shape[0]) if index is None else index
    flipped = tuple(
        FlippedRow(
            index=int(index[i]),
            label=int(labels[i]),
            plain=int(pred_p[i]),
            autocast=int(pred_a[i]),
            plain_margin=float(m_p[i]),
            autocast_margin=float(m_a[i]),
            x=_row_values(rows, i),
        )
        for i in changed[:MAX_FLIPPED]
    )
    return AccuracyReport(
        plain=float(right_p.mean()),
        autocast=float(right_a.mean()),
        rows=int(labels.shape[0]),
        flipped=flipped,
        flipped_total=int(changed.size),
        interval=paired_bootstrap(right_p, right_a, seed),
        dtype=dtype,
    )


def paired_bootstrap(
    right_plain: np.ndarray, right_autocast: np.ndarray, seed: int, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """95% percentile interval of mean(right_autocast − right_plain) over resampled rows."""
    diff = right_autocast.astype(np.int8) - right_plain.astype(np.int8)
    n = diff.shape[0]
    rng = np.random.default_rng(seed + BOOTSTRAP_SEED_OFFSET)
    means = np.empty(resamples)
    for start in range(0, resamples, 250):  # bounded memory for large held-out sets
        count = min(250, resamples - start)
        picks = rng.integers(0, n, size=(count, n))
        means[start : start + count] = diff[picks].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def _finite(values: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(values), values, 0.0)


def _row_values(rows: np.ndarray | None, i: int) -> tuple[float, ...]:
    if rows is None or rows[i].size > MAX_STORED_ROW:
        return ()
    return tuple(float(v) for v in rows[i].reshape(-1))
