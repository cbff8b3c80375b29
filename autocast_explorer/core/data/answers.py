"""Does autocast change the answers? Held-out predictions in float32 and under autocast, compared.

Works on any classifier (`nn.Module`) and rows reshaped to the input it takes, so a user's model
fits as well as ours. The accuracy difference gets a 95% paired-bootstrap interval: rows are
resampled together, so both copies are always scored on the same rows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from autocast_explorer.core.documents.reader import JsonReader, integer

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


@dataclass(frozen=True)
class FlippedRow:
    """A held-out row whose predicted class differs between float32 and autocast.

    `index` is the row's position in the data file; a margin is the top logit minus the
    runner-up in that copy's own logits (small: the answer was nearly a tie). `x` holds the
    row's values (for drawing it) when the row is small enough, else is empty.
    """

    index: int
    label: int
    plain: int
    autocast: int
    plain_margin: float
    autocast_margin: float
    x: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index,
            "label": self.label,
            "plain": self.plain,
            "autocast": self.autocast,
            "plain_margin": self.plain_margin,
            "autocast_margin": self.autocast_margin,
        }
        if self.x:
            data["x"] = list(self.x)
        return data

    @classmethod
    def from_reader(cls, r: JsonReader) -> FlippedRow:
        return cls(
            index=integer(r, "index", minimum=0),
            label=integer(r, "label", minimum=0),
            plain=integer(r, "plain", minimum=0),
            autocast=integer(r, "autocast", minimum=0),
            plain_margin=r.number("plain_margin", minimum=0),
            autocast_margin=r.number("autocast_margin", minimum=0),
            x=tuple(r.numbers("x", required=False)),
        )


@dataclass(frozen=True)
class AccuracyReport:
    """Held-out accuracy of one trained model in float32 and under autocast; the result's
    `accuracy` object. `interval` bounds autocast − float32 accuracy (95%, paired bootstrap)."""

    plain: float
    autocast: float
    rows: int
    flipped: tuple[FlippedRow, ...]
    flipped_total: int
    interval: tuple[float, float]
    dtype: str

    @property
    def difference(self) -> float:
        return self.autocast - self.plain

    def confusion(self) -> dict[tuple[int, int], int]:
        """How often float32's answer p became autocast's answer a, over the flips kept."""
        return dict(Counter((f.plain, f.autocast) for f in self.flipped))

    def to_dict(self) -> dict[str, Any]:
        return {
            "plain": self.plain,
            "autocast": self.autocast,
            "rows": self.rows,
            "dtype": self.dtype,
            "flipped": [f.to_dict() for f in self.flipped],
            "flipped_total": self.flipped_total,
            "interval": list(self.interval),
        }

    @classmethod
    def from_reader(cls, r: JsonReader) -> AccuracyReport:
        interval = r.numbers("interval")
        if len(interval) != 2 or interval[0] > interval[1]:
            raise r.fail("interval", "expected [low, high] with low ≤ high")
        plain, autocast = r.number("plain", minimum=0), r.number("autocast", minimum=0)
        if plain > 1 or autocast > 1:
            raise r.fail("plain" if plain > 1 else "autocast", "expected a number in 0 … 1")
        flipped = tuple(FlippedRow.from_reader(f) for f in r.objects("flipped"))
        return cls(
            plain=plain,
            autocast=autocast,
            rows=integer(r, "rows", minimum=0),
            flipped=flipped,
            flipped_total=integer(r, "flipped_total", minimum=len(flipped)),
            interval=(interval[0], interval[1]),
            dtype=r.text("dtype", default=""),
        )


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
    return (top2[:, 1] - top2[:, 0]).astype(np.float64)


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
