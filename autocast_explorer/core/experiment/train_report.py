"""What training both copies found, and the result JSON's `train` object it is written as.

One class per part serves the program, reading, writing and the schema. Every figure is per
copy, `plain` (float32) and `autocast`: the program holds them as dicts by mode, the file as an
object with both keys.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
    Fraction,
    NonNegative,
    NullableNumber,
    NullableNumbers,
    PositiveWhole,
    Text,
    TextMap,
    Texts,
    Whole,
    WholeMap,
    Wholes,
    refuse,
)
from autocast_explorer.core.documents.held import WrittenAs, leave_out_empty, write_always
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.train_step import StepTiming
from autocast_explorer.core.experiment.train_task import CROSS_ENTROPY, LOSS_NAMES

MODES: tuple[str, str] = ("plain", "autocast")


# ---- the file's shapes of a per-copy value -----------------------------------------------------


class DtypePair(Part):
    in_: Annotated[Text, Field(alias="in")]
    out: Text


class GradPair(Part):
    grad_out: Text
    grad_in: Text


class PerModeLoss(Part):
    plain: Annotated[
        NullableNumbers, Field(description="the loss of every step (null: not finite)")
    ]
    autocast: Annotated[
        NullableNumbers, Field(description="the loss of every step (null: not finite)")
    ]


class PerModeAccuracy(Part):
    plain: Fraction
    autocast: Fraction


class PerModeText(Part):
    plain: Text
    autocast: Text


class PerModeCount(Part):
    plain: Whole
    autocast: Whole


class PerModeNullableNumber(Part):
    plain: NullableNumber
    autocast: NullableNumber


def _loss_kind(value: Any) -> Any:
    if value not in LOSS_NAMES:
        raise refuse(f"expected one of {', '.join(LOSS_NAMES)}")
    return value


#: cross_entropy or mse (train_task.LOSS_NAMES).
LossKind = Annotated[
    str, BeforeValidator(_loss_kind), WithJsonSchema({"enum": list(LOSS_NAMES), "type": "string"})
]

#: Per copy, the program's dict {"plain": …, "autocast": …} written as the part's object.
ModeLosses = Annotated[dict[str, tuple[float, ...]], WrittenAs(PerModeLoss, nan_for_null=True)]
ModeAccuracies = Annotated[dict[str, float], WrittenAs(PerModeAccuracy)]
ModeTexts = Annotated[dict[str, str], WrittenAs(PerModeText)]
ModeCounts = Annotated[dict[str, int], WrittenAs(PerModeCount)]
ModeNumbers = Annotated[dict[str, float], WrittenAs(PerModeNullableNumber, nan_for_null=True)]


# ---- what one probed step saw, per layer and per op ----------------------------------------------


class LayerTrace(Part):
    """One layer in both modes: forward input/output dtypes, backward grad-output/grad-input."""

    name: Text
    kind: Text
    #: mode → (in dtype, out dtype)
    forward: dict[str, Annotated[tuple[str, str], WrittenAs(DtypePair, pair=True)]]
    #: mode → (grad of output dtype, grad of input dtype)
    backward: dict[str, Annotated[tuple[str, str], WrittenAs(GradPair, pair=True)]]


class OpUse(Part):
    """How often one aten op ran with given input and output dtypes in one phase of a step."""

    op: Text
    in_dtypes: Annotated[Texts, Field(alias="in")] = ()
    out_dtypes: Annotated[Texts, Field(alias="out")] = ()
    count: Whole


# ---- the report ----------------------------------------------------------------------------------


class ScalerReport(Part):
    """The GradScaler (float16 only) and what the low dtype did to the gradients."""

    schema_name: ClassVar[str] = "scaler"

    used: Flag
    enabled: Flag
    init_scale: NullableNumber = None
    final_scale: NullableNumber = None
    skipped_steps: Whole
    underflowed_grads: Annotated[
        Whole,
        Field(description="gradient elements zero under autocast but not in float32, first step"),
    ]
    grad_elements: Whole

    @model_validator(mode="after")
    def _written_whole(self) -> ScalerReport:
        write_always(self, *type(self).model_fields)
        return self


class PhaseTimes(Part):
    """Median milliseconds of each phase of a training step, over the steps after the first."""

    schema_name: ClassVar[str] = "phases"

    forward_ms: NonNegative
    backward_ms: NonNegative
    optimizer_ms: NonNegative

    @classmethod
    def of(cls, steps: list[StepTiming]) -> PhaseTimes:
        warm = steps[1:] or steps
        return cls(
            forward_ms=float(np.median([s.forward_s for s in warm])) * 1e3,
            backward_ms=float(np.median([s.backward_s for s in warm])) * 1e3,
            optimizer_ms=float(np.median([s.optimizer_s for s in warm])) * 1e3,
        )


class EpochScore(Part):
    """Training on real data: one epoch's mean loss and held-out accuracy, per copy."""

    epoch: PositiveWhole
    step: PositiveWhole
    loss: Annotated[ModeNumbers, Field(description="mean training loss of the epoch")]
    accuracy: Annotated[ModeAccuracies, Field(description="held-out accuracy after the epoch")]


class TrainReport(Part):
    """Training mode: everything measured by training both copies (losses, dtypes, saved
    bytes, the scaler); the result JSON's `train` object."""

    schema_name: ClassVar[str] = "train"

    steps: PositiveWhole
    #: cross_entropy (classifier logits; `accuracy` filled) or mse (no classes: `accuracy`
    #: empty, `target_shape` one sample's target). Older results: cross_entropy.
    loss_kind: LossKind = Field(
        default=CROSS_ENTROPY,
        description="the loss trained on: cross_entropy against seeded labels (classifier "
        "logits), or mse to a fixed seeded random target of the output's shape (any other "
        "output); absent in older files, which all trained with cross-entropy",
    )
    loss: ModeLosses  # mode -> loss of every step
    #: mode -> held-out accuracy after training; {} for mse
    accuracy: Annotated[
        dict[str, float],
        WrittenAs(PerModeAccuracy, empty_for_null=True),
        Field(
            description="held-out accuracy after training (cross_entropy only: an mse task has "
            "no classes)"
        ),
    ] = Field(default=None, validate_default=True)
    #: mode -> held-out loss; {} in older results
    held_out_loss: Annotated[
        dict[str, float],
        WrittenAs(PerModeNullableNumber, nan_for_null=True, empty_for_null=True),
        Field(
            description="the loss on the held-out batches after training, in float32 from each "
            "copy's output (absent in older files)"
        ),
    ] = Field(default=None, validate_default=True)
    target_shape: Annotated[
        Wholes, Field(description="mse: one sample's target (the output's shape)")
    ] = ()
    held_out_rows: Whole
    loss_dtype: ModeTexts
    output_dtype: ModeTexts
    grad_dtypes: Annotated[TextMap, Field(description="parameter → gradient dtype (autocast)")]
    grad_dtypes_plain: TextMap
    saved_bytes: Annotated[ModeCounts, Field(description="bytes packed by saved_tensors_hooks")]
    saved_tensors: ModeCounts
    layers: tuple[LayerTrace, ...]
    ops: dict[str, dict[str, tuple[OpUse, ...]]]  # mode -> phase (forward/backward) -> ops
    phases: dict[str, PhaseTimes]
    scaler: ScalerReport
    nonfinite_steps: WholeMap = Field(default_factory=dict)
    epochs: tuple[EpochScore, ...] = Field(
        default=(),
        description="real data: both copies scored on the held-out rows after every epoch",
    )

    @model_validator(mode="after")
    def _accuracy_with_cross_entropy(self) -> TrainReport:
        if self.loss_kind == CROSS_ENTROPY and not self.accuracy:
            raise refuse("missing (cross-entropy training has an accuracy)", at="accuracy")
        write_always(self, *type(self).model_fields)
        leave_out_empty(self, "accuracy", "held_out_loss", "target_shape")
        return self

    @property
    def has_accuracy(self) -> bool:
        """Cross-entropy training scores classes; an MSE task has none to be right about."""
        return self.loss_kind == CROSS_ENTROPY

    @property
    def loss_name(self) -> str:
        """'cross-entropy' or 'MSE', for axis captions and sentences."""
        return LOSS_NAMES.get(self.loss_kind, self.loss_kind)

    def no_accuracy_reason(self) -> str:
        """Why an MSE run has no accuracy ('' for cross-entropy)."""
        if self.has_accuracy:
            return ""
        shape = "×".join(map(str, ("batch", *self.target_shape)))
        return (
            f"the output is {shape}, not batch × classes logits, so it trained with MSE to a "
            "fixed random target of that shape and there is no class to be right about"
        )

    def held_out_loss_text(self) -> str:
        """'0.0646 / 0.0648' (float32 / autocast held-out loss); '—' in older results."""
        if not self.held_out_loss:
            return "—"
        return " / ".join(f"{self.held_out_loss[m]:.4g}" for m in MODES)

    @property
    def saved_ratio(self) -> float:
        """autocast's saved bytes / float32's (below 1: autocast saves less)."""
        plain = self.saved_bytes.get("plain", 0)
        return self.saved_bytes.get("autocast", 0) / plain if plain else math.nan

    def diverged_at(self, mode: str) -> int | None:
        """The first step (1-based) whose loss was not finite in `mode`; None if none was."""
        for step, value in enumerate(self.loss.get(mode, ()), start=1):
            if not math.isfinite(value):
                return step
        return None

    def divergence(self) -> str:
        """One sentence saying which copy diverged and where; empty when neither did."""
        names = {"plain": "float32", "autocast": "autocast"}
        parts = [
            f"{names[m]} at step {step}" for m in MODES if (step := self.diverged_at(m)) is not None
        ]
        if not parts:
            return ""
        if len(parts) == len(MODES):
            why = "both copies diverged, so autocast alone is not the cause (try a lower lr)"
        elif self.diverged_at("autocast") is not None:
            why = "only the autocast copy diverged: float32 trained on with the same lr"
        else:
            why = "only the float32 copy diverged"
        return (
            f"The run diverged: the loss became NaN or infinite ({', '.join(parts)}); {why}. "
            "Such losses are stored as null."
        )

    def to_dict(self) -> dict[str, Any]:
        return dump(self)
