"""What training both copies found, and the result JSON's `train` object it is written as.

One typed definition (the Parts) serves reading, writing and the schema; the dataclasses are
what code and the tester's kit handle. Every figure is per copy: `plain` (float32) and
`autocast`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

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
from autocast_explorer.core.documents.model import Part, build, dump, nan_if_none
from autocast_explorer.core.experiment.train_step import StepTiming
from autocast_explorer.core.experiment.train_task import CROSS_ENTROPY, LOSS_NAMES

MODES: tuple[str, str] = ("plain", "autocast")


# ---- the `train` object of a result (one typed definition: reading, writing, schema) -------------


class DtypePair(Part):
    in_: Text = Field(alias="in")
    out: Text


class GradPair(Part):
    grad_out: Text
    grad_in: Text


class LayerTracePart(Part):
    name: Text
    kind: Text
    forward: dict[str, DtypePair]
    backward: dict[str, GradPair]


class OpUsePart(Part):
    op: Text
    in_dtypes: Texts = Field(default=(), alias="in")
    out_dtypes: Texts = Field(default=(), alias="out")
    count: Whole


class PhasesPart(Part):
    forward_ms: NonNegative
    backward_ms: NonNegative
    optimizer_ms: NonNegative


class ScalerPart(Part):
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


class EpochScorePart(Part):
    epoch: PositiveWhole
    step: PositiveWhole
    loss: PerModeNullableNumber = Field(description="mean training loss of the epoch")
    accuracy: PerModeAccuracy = Field(description="held-out accuracy after the epoch")


class TrainPart(Part):
    """training mode: both copies' losses, dtypes, saved bytes and the scaler"""

    steps: PositiveWhole
    loss_kind: Literal["cross_entropy", "mse"] = Field(
        default="cross_entropy",
        description="the loss trained on: cross_entropy against seeded labels (classifier "
        "logits), or mse to a fixed seeded random target of the output's shape (any other "
        "output); absent in older files, which all trained with cross-entropy",
    )
    loss: PerModeLoss
    accuracy: PerModeAccuracy | None = Field(
        default=None,
        description="held-out accuracy after training (cross_entropy only: an mse task has no "
        "classes)",
    )
    held_out_loss: PerModeNullableNumber | None = Field(
        default=None,
        description="the loss on the held-out batches after training, in float32 from each "
        "copy's output (absent in older files)",
    )
    target_shape: Annotated[
        Wholes, Field(description="mse: one sample's target (the output's shape)")
    ] = ()
    held_out_rows: Whole
    loss_dtype: PerModeText
    output_dtype: PerModeText
    grad_dtypes: Annotated[TextMap, Field(description="parameter → gradient dtype (autocast)")]
    grad_dtypes_plain: TextMap
    saved_bytes: PerModeCount = Field(description="bytes packed by saved_tensors_hooks")
    saved_tensors: PerModeCount
    layers: tuple[LayerTracePart, ...]
    ops: dict[str, dict[str, tuple[OpUsePart, ...]]]
    phases: dict[str, PhasesPart]
    scaler: ScalerPart
    nonfinite_steps: WholeMap = Field(default_factory=dict)
    epochs: tuple[EpochScorePart, ...] = Field(
        default=(),
        description="real data: both copies scored on the held-out rows after every epoch",
    )

    @model_validator(mode="after")
    def _accuracy_with_cross_entropy(self) -> TrainPart:
        if self.loss_kind == "cross_entropy" and self.accuracy is None:
            raise refuse("missing (cross-entropy training has an accuracy)", at="accuracy")
        return self


# ---- what one probed step saw, per layer and per op ----------------------------------------------


@dataclass(frozen=True)
class LayerTrace:
    """One layer in both modes: forward input/output dtypes, backward grad-output/grad-input."""

    name: str
    kind: str
    forward: dict[str, tuple[str, str]]  # mode -> (in dtype, out dtype)
    backward: dict[str, tuple[str, str]]  # mode -> (grad of output dtype, grad of input dtype)

    def to_part(self) -> LayerTracePart:
        return build(
            LayerTracePart,
            name=self.name,
            kind=self.kind,
            forward={m: build(DtypePair, in_=i, out=o) for m, (i, o) in self.forward.items()},
            backward={
                m: build(GradPair, grad_out=o, grad_in=i) for m, (o, i) in self.backward.items()
            },
        )

    @classmethod
    def from_part(cls, part: LayerTracePart) -> LayerTrace:
        return cls(
            name=part.name,
            kind=part.kind,
            forward={m: (p.in_, p.out) for m, p in part.forward.items()},
            backward={m: (p.grad_out, p.grad_in) for m, p in part.backward.items()},
        )


@dataclass(frozen=True)
class OpUse:
    """How often one aten op ran with given input and output dtypes in one phase of a step."""

    op: str
    in_dtypes: tuple[str, ...]
    out_dtypes: tuple[str, ...]
    count: int

    def to_part(self) -> OpUsePart:
        return build(
            OpUsePart,
            op=self.op,
            in_dtypes=self.in_dtypes,
            out_dtypes=self.out_dtypes,
            count=self.count,
        )

    @classmethod
    def from_part(cls, part: OpUsePart) -> OpUse:
        return cls(part.op, part.in_dtypes, part.out_dtypes, part.count)


# ---- the report ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalerReport:
    """The GradScaler (float16 only) and what the low dtype did to the gradients."""

    used: bool
    enabled: bool
    init_scale: float | None
    final_scale: float | None
    skipped_steps: int
    underflowed_grads: int
    grad_elements: int

    def to_part(self) -> ScalerPart:
        return build(ScalerPart, **{name: getattr(self, name) for name in ScalerPart.model_fields})

    @classmethod
    def from_part(cls, part: ScalerPart) -> ScalerReport:
        return cls(**{name: getattr(part, name) for name in ScalerPart.model_fields})


@dataclass(frozen=True)
class PhaseTimes:
    """Median milliseconds of each phase of a training step, over the steps after the first."""

    forward_ms: float
    backward_ms: float
    optimizer_ms: float

    def to_part(self) -> PhasesPart:
        return build(
            PhasesPart,
            forward_ms=self.forward_ms,
            backward_ms=self.backward_ms,
            optimizer_ms=self.optimizer_ms,
        )

    @classmethod
    def of(cls, steps: list[StepTiming]) -> PhaseTimes:
        warm = steps[1:] or steps
        return cls(
            forward_ms=float(np.median([s.forward_s for s in warm])) * 1e3,
            backward_ms=float(np.median([s.backward_s for s in warm])) * 1e3,
            optimizer_ms=float(np.median([s.optimizer_s for s in warm])) * 1e3,
        )


@dataclass(frozen=True)
class EpochScore:
    """Training on real data: one epoch's mean loss and held-out accuracy, per copy."""

    epoch: int
    step: int
    loss: dict[str, float]
    accuracy: dict[str, float]

    def to_part(self) -> EpochScorePart:
        return build(
            EpochScorePart,
            epoch=self.epoch,
            step=self.step,
            loss=build(PerModeNullableNumber, **self.loss),
            accuracy=build(PerModeAccuracy, **self.accuracy),
        )

    @classmethod
    def from_part(cls, part: EpochScorePart) -> EpochScore:
        return cls(
            epoch=part.epoch,
            step=part.step,
            loss={m: nan_if_none(getattr(part.loss, m)) for m in MODES},
            accuracy={m: getattr(part.accuracy, m) for m in MODES},
        )


@dataclass(frozen=True)
class TrainReport:
    """Everything measured by training both copies; the result JSON's `train` object."""

    steps: int
    loss: dict[str, tuple[float, ...]]  # mode -> loss of every step
    accuracy: dict[str, float]  # mode -> held-out accuracy after training
    held_out_rows: int
    loss_dtype: dict[str, str]
    output_dtype: dict[str, str]
    grad_dtypes: dict[str, str]  # parameter -> gradient dtype under autocast
    grad_dtypes_plain: dict[str, str]
    saved_bytes: dict[str, int]
    saved_tensors: dict[str, int]
    layers: tuple[LayerTrace, ...]
    ops: dict[str, dict[str, tuple[OpUse, ...]]]  # mode -> phase (forward/backward) -> ops
    phases: dict[str, PhaseTimes]
    scaler: ScalerReport
    nonfinite_steps: dict[str, int] = field(default_factory=dict)
    epochs: tuple[EpochScore, ...] = ()  # real data only: loss and held-out accuracy per epoch
    #: cross_entropy (classifier logits; `accuracy` filled) or mse (no classes: `accuracy`
    #: empty, `target_shape` one sample's target). Older results: cross_entropy.
    loss_kind: str = CROSS_ENTROPY
    held_out_loss: dict[str, float] = field(default_factory=dict)  # empty in older results
    target_shape: tuple[int, ...] = ()

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
        return dump(self.to_part())

    def to_part(self) -> TrainPart:
        def per_mode(model: type[Part], values: dict[str, Any]) -> Part:
            return build(model, **values)

        scores: dict[str, Any] = {}
        if self.accuracy:
            scores["accuracy"] = per_mode(PerModeAccuracy, self.accuracy)
        if self.held_out_loss:
            scores["held_out_loss"] = per_mode(PerModeNullableNumber, self.held_out_loss)
        if self.target_shape:
            scores["target_shape"] = self.target_shape
        return build(
            TrainPart,
            steps=self.steps,
            loss_kind=self.loss_kind,
            loss=per_mode(PerModeLoss, {m: tuple(v) for m, v in self.loss.items()}),
            **scores,
            held_out_rows=self.held_out_rows,
            loss_dtype=per_mode(PerModeText, self.loss_dtype),
            output_dtype=per_mode(PerModeText, self.output_dtype),
            grad_dtypes=dict(self.grad_dtypes),
            grad_dtypes_plain=dict(self.grad_dtypes_plain),
            saved_bytes=per_mode(PerModeCount, self.saved_bytes),
            saved_tensors=per_mode(PerModeCount, self.saved_tensors),
            layers=tuple(layer.to_part() for layer in self.layers),
            ops={
                m: {phase: tuple(op.to_part() for op in ops) for phase, ops in phases.items()}
                for m, phases in self.ops.items()
            },
            phases={m: p.to_part() for m, p in self.phases.items()},
            scaler=self.scaler.to_part(),
            nonfinite_steps=dict(self.nonfinite_steps),
            epochs=tuple(e.to_part() for e in self.epochs),
        )

    @classmethod
    def from_part(cls, part: TrainPart) -> TrainReport:
        def modes(per_mode: Part) -> dict[str, Any]:
            return {m: getattr(per_mode, m) for m in MODES}

        return cls(
            steps=part.steps,
            loss={m: tuple(nan_if_none(v) for v in getattr(part.loss, m)) for m in MODES},
            accuracy=modes(part.accuracy) if part.accuracy is not None else {},
            held_out_rows=part.held_out_rows,
            loss_dtype=modes(part.loss_dtype),
            output_dtype=modes(part.output_dtype),
            grad_dtypes=dict(part.grad_dtypes),
            grad_dtypes_plain=dict(part.grad_dtypes_plain),
            saved_bytes=modes(part.saved_bytes),
            saved_tensors=modes(part.saved_tensors),
            layers=tuple(LayerTrace.from_part(layer) for layer in part.layers),
            ops={
                m: {phase: tuple(OpUse.from_part(o) for o in ops) for phase, ops in phases.items()}
                for m, phases in part.ops.items()
            },
            phases={
                m: PhaseTimes(p.forward_ms, p.backward_ms, p.optimizer_ms)
                for m, p in part.phases.items()
            },
            scaler=ScalerReport.from_part(part.scaler),
            nonfinite_steps=dict(part.nonfinite_steps),
            epochs=tuple(EpochScore.from_part(e) for e in part.epochs),
            loss_kind=part.loss_kind,
            held_out_loss=(
                {m: nan_if_none(getattr(part.held_out_loss, m)) for m in MODES}
                if part.held_out_loss is not None
                else {}
            ),
            target_shape=tuple(part.target_shape),
        )
