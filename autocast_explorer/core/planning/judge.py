"""Measuring a criterion: a lowered forward's answers against float32's, as its measure says.

- agree: percent of rows whose argmax matches float32's (needs batch × classes logits);
- sqnr: the output's signal-to-quantisation-noise ratio in dB, clipped to ±SQNR_CEILING_DB
  (identical outputs: the ceiling; an output that is not finite: NaN, which meets nothing);
- accuracy-drop: float32's held-out accuracy minus the lowered one's, in points, with the 95%
  paired-bootstrap interval of the answers module (rows resampled together).

On real data every measure also counts the flipped examples: held-out rows whose predicted
class (argmax of what is finite, as the answers module reads it) differs from float32's.

The outputs are judged on what the plan's subject holds: the held-out rows on real data, else
the run's input batch.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from autocast_explorer.core.data.answers import paired_bootstrap
from autocast_explorer.core.experiment.capture import first_tensor
from autocast_explorer.core.numerics.flips import flip_count
from autocast_explorer.core.numerics.layer_error import layer_error
from autocast_explorer.core.planning.criterion import Criterion
from autocast_explorer.core.runtime.errors import ConfigError

#: float32's own precision is about 144 dB (24-bit mantissa): beyond this a lowered output is
#: as close to float32's as float32 is to itself, so +inf (identical) is written as this.
SQNR_CEILING_DB = 150.0


@dataclass(frozen=True)
class Measured:
    """One value of a criterion's measure, and its 95% interval where it has one (the accuracy
    drop's); NaN: not measured, or the output was not finite."""

    value: float
    low: float | None = None
    high: float | None = None
    #: The answers were float32's, bit for bit: nothing lowered changed them.
    identical: bool = False
    #: On real data: the held-out rows whose predicted class differs from float32's, of
    #: `held_out` rows judged.
    flips: int | None = None
    held_out: int = 0

    def met(self, criterion: Criterion) -> bool:
        return criterion.met(self.value, self.low, self.high)

    @property
    def finite(self) -> float | None:
        """The value as a document writes it (None when NaN)."""
        return None if math.isnan(self.value) else self.value


NOT_MEASURED = Measured(math.nan)


def _logits(outputs: Sequence[object]) -> torch.Tensor:
    tensors = [first_tensor(out) for out in outputs]
    if any(t is None for t in tensors):
        raise ValueError("the model returned no tensor")
    return torch.cat([t.detach().float() for t in tensors if t is not None])


class Judge:
    """The float32 answers of a subject, and the criterion's measure of any other answers."""

    def __init__(
        self,
        criterion: Criterion,
        reference: Sequence[object],
        labels: np.ndarray | None = None,
        seed: int = 0,
        rows: int | None = None,
    ) -> None:
        self.criterion = criterion
        self.reference = _logits(reference)
        self.labels = labels
        self.seed = seed
        self.rows = self.reference.shape[0] if rows is None else rows
        refusal = self.refusal()
        if refusal:
            raise ConfigError("criterion", refusal)

    @property
    def classes(self) -> bool:
        """Whether the output is batch × classes logits (a predicted class per row)."""
        return self.reference.dim() == 2 and self.reference.shape[1] >= 2

    def refusal(self) -> str:
        """Why this criterion cannot be measured on this model's output ('' when it can)."""
        measure = self.criterion.measure
        if measure == "accuracy-drop" and self.labels is None:
            return "accuracy-drop needs real data (--data digits or a file of yours)"
        if measure in ("agree", "accuracy-drop") and not self.classes:
            shape = "×".join(map(str, ("batch", *self.reference.shape[1:])))
            return (
                f"{measure} needs batch × classes logits, and this model's output is {shape}: "
                "use sqnr>=DB"
            )
        return ""

    def perfect(self) -> Measured:
        """float32 itself: full agreement, the SQNR ceiling, no drop."""
        value = {"agree": 100.0, "sqnr": SQNR_CEILING_DB, "accuracy-drop": 0.0}
        interval = (0.0, 0.0) if self.criterion.measure == "accuracy-drop" else (None, None)
        return Measured(value[self.criterion.measure], *interval)

    def measure(self, outputs: Sequence[object]) -> Measured:
        """The criterion's measure of `outputs` (the same rows, in the same chunks, as the
        reference; padding beyond `rows` left out)."""
        low = _logits(outputs)[: self.rows]
        reference = self.reference[: self.rows]
        if low.shape != reference.shape:
            return NOT_MEASURED
        measured = self._measure(reference, low)
        if self.labels is not None and self.classes:
            flips = flip_count(_predicting(reference), _predicting(low))
            measured = dataclasses.replace(measured, flips=flips, held_out=self.rows)
        if torch.equal(reference, low):
            return dataclasses.replace(measured, identical=True)
        return measured

    def _measure(self, reference: torch.Tensor, low: torch.Tensor) -> Measured:
        measure = self.criterion.measure
        if measure == "sqnr":
            sqnr = layer_error(reference, low).sqnr_db
            return Measured(sqnr if math.isnan(sqnr) else _clip(sqnr))
        if measure == "agree":
            same = reference.argmax(dim=1) == low.argmax(dim=1)
            return Measured(100.0 * float(same.double().mean()))
        return self._drop(reference, low)

    def _drop(self, reference: torch.Tensor, low: torch.Tensor) -> Measured:
        """Points of held-out accuracy lost, with its interval (a NaN logit answers as the
        argmax of what is finite, as the answers module reads it)."""
        assert self.labels is not None
        labels = self.labels[: self.rows]
        plain = _predicting(reference).argmax(dim=1).numpy() == labels
        lowered = _predicting(low).argmax(dim=1).numpy() == labels
        gain_low, gain_high = paired_bootstrap(plain, lowered, self.seed)
        drop = 100.0 * float(plain.mean() - lowered.mean())
        return Measured(drop, -100.0 * gain_high, -100.0 * gain_low)


def _predicting(logits: torch.Tensor) -> torch.Tensor:
    """Logits whose argmax is the answers module's predicted class (a NaN never wins)."""
    return logits.nan_to_num(nan=-math.inf)


def _clip(sqnr: float) -> float:
    return max(-SQNR_CEILING_DB, min(SQNR_CEILING_DB, sqnr))
