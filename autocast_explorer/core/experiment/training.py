"""Training under autocast: two identical models, one float32 and one autocast, side by side.

What autocast does in a training loop differs from inference: the forward runs in the low dtype,
the loss comes back float32 (cross_entropy is on CPU autocast's float32 list), gradients are
float32 because the parameters are, and the tensors autograd saves for backward are stored in the
low dtype — the real memory saving. float16 also needs a GradScaler. Everything here is measured:
dtypes from hooks and a dispatch-mode trace, saved bytes from `saved_tensors_hooks`.

Both runs start from one seeded initialisation and see the same batches of one seeded synthetic
task in the same order; their steps are interleaved so drift on a shared CPU hits both alike.
The training code needs only a `ModelSource` (build the model, draw an input batch, count the
classes), so every model family can train.
"""

from __future__ import annotations

import copy
import itertools
import math
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
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
from autocast_explorer.core.experiment.capture import AutocastFailed, first_tensor
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.record import rows_at_depth
from autocast_explorer.core.experiment.model import build_input, build_model, low_precision_dtype
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.numerics.optrace import OpTracer
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.errors import ConfigError, error_text
from autocast_explorer.core.runtime.progress import Reporter

MODES: tuple[str, str] = ("plain", "autocast")


# ---- the `train` object of a result (one typed definition: reading, writing, schema) ----------


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
    plain: NonNegative
    autocast: NonNegative


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


#: Distinct training batches the task holds; steps cycle through them (bounded memory).
TRAIN_POOL_BATCHES = 8
#: Held-out batches for the final accuracy (never trained on).
HELD_OUT_BATCHES = 4
#: Distance of each class's centre from the origin, in units of the input noise: large enough
#: that the task is learnable in tens of steps, small enough that the loss falls gradually.
CENTROID_NORM = 4.0
#: The task is drawn from its own stream, so changing the model does not change the data.
TASK_SEED_OFFSET = 7919
#: GradScaler's starting scale (torch's default, written out so the report can state it).
INIT_SCALE = 2.0**16


#: The two losses a run can train on (the result's `train.loss_kind`).
CROSS_ENTROPY = "cross_entropy"
MSE = "mse"
LOSS_NAMES = {CROSS_ENTROPY: "cross-entropy", MSE: "MSE"}


@dataclass(frozen=True)
class LossPlan:
    """What a model trains against: classifier logits (`classes` > 0) take cross-entropy against
    seeded labels; any other output takes MSE to one fixed seeded random target of one sample's
    output shape (`target_shape`), the same for every row, which every model can learn."""

    kind: str
    classes: int = 0
    target_shape: tuple[int, ...] = ()


def loss_plan(config: ExperimentConfig) -> LossPlan:
    """The built-in families are classifiers (an MLP's last width, another family's `classes`);
    a user model is one when its batch-1 probe measured batch × classes float logits, else
    it trains with MSE. The probe reads the same tensor every run path reads (the output
    adapter's rule: a Hugging Face output's `logits`, else its `last_hidden_state`)."""
    if not config.is_user_model:
        classes = config.widths[-1] if config.model == "mlp" else config.classes
        return LossPlan(CROSS_ENTROPY, classes)
    from autocast_explorer.core.experiment.families.user.probe import probe

    measured = probe(config)
    if measured.classes:
        return LossPlan(CROSS_ENTROPY, measured.classes)
    if not measured.output_dtype.startswith(("float", "bfloat")):
        raise ConfigError(
            "mode",
            f"training needs a floating-point output to take a loss of; {config.model} "
            f"outputs {measured.output_dtype}",
        )
    return LossPlan(MSE, target_shape=tuple(measured.output_shape[1:]))


@dataclass(frozen=True)
class ModelSource:
    """What training needs from a model family: the model, one input batch, the loss plan.

    `make_input` draws one batch of `config.batch` rows from torch's global RNG (the task seeds
    it), so any family's own input maker fits.
    """

    build_model: Callable[[ExperimentConfig], torch.nn.Module]
    make_input: Callable[[ExperimentConfig], torch.Tensor]
    loss: Callable[[ExperimentConfig], LossPlan]


#: The config's own model family (model.build_model / build_input dispatch to it).
MLP_SOURCE = ModelSource(build_model=build_model, make_input=build_input, loss=loss_plan)


@dataclass(frozen=True)
class SyntheticTask:
    """A fixed, learnable problem: each class is a centre plus the input noise (cross-entropy),
    or one fixed random target for every row (MSE)."""

    batches: tuple[tuple[torch.Tensor, torch.Tensor], ...]
    held_out: tuple[tuple[torch.Tensor, torch.Tensor], ...]
    loss_kind: str = CROSS_ENTROPY

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.batches[step % len(self.batches)]


class Task(Protocol):
    """What training draws from: the synthetic task, or real rows (experiment/data_task.py)."""

    @property
    def held_out(self) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]: ...

    @property
    def loss_kind(self) -> str: ...

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]: ...


def make_task(config: ExperimentConfig, source: ModelSource = MLP_SOURCE) -> SyntheticTask:
    """Seeded batches from the task's own stream: a classifier's are `class_task`'s; an MSE
    task draws its inputs as they come and one standard-normal target of the output's
    per-sample shape, repeated for every row."""
    plan = source.loss(config)
    torch.manual_seed(config.seed + TASK_SEED_OFFSET)
    if plan.kind == MSE:
        target = torch.randn(plan.target_shape)

        def draw_mse() -> tuple[torch.Tensor, torch.Tensor]:
            x = source.make_input(config)
            return x, target.expand(x.shape[0], *plan.target_shape).contiguous()

        batches = tuple(draw_mse() for _ in range(TRAIN_POOL_BATCHES))
        held_out = tuple(draw_mse() for _ in range(HELD_OUT_BATCHES))
        return SyntheticTask(batches=batches, held_out=held_out, loss_kind=MSE)
    batches, held_out = class_task(lambda: source.make_input(config), plan.classes)
    return SyntheticTask(batches=batches, held_out=held_out)


def class_task(
    draw: Callable[[], torch.Tensor], classes: int
) -> tuple[
    tuple[tuple[torch.Tensor, torch.Tensor], ...], tuple[tuple[torch.Tensor, torch.Tensor], ...]
]:
    """The training and held-out batches of a classification task from torch's RNG as it
    stands: labels uniform, x = a drawn input + its class's centre (reproduce.py pastes this).

    Integer inputs (token ids) cannot take a centre; their label is the first token modulo the
    class count, which a sequence model can learn.
    """
    probe = draw()
    centres: torch.Tensor | None = None
    if probe.is_floating_point():
        row = probe[0]
        noise = float(probe.float().std()) or 1.0  # follows --input-scale and the distribution
        spread = CENTROID_NORM * noise / math.sqrt(row.numel())
        centres = torch.randn((classes, *row.shape)) * spread

    def labelled() -> tuple[torch.Tensor, torch.Tensor]:
        x = draw()
        if centres is None:
            return x, x.reshape(x.shape[0], -1)[:, 0].long() % classes
        y = torch.randint(0, classes, (x.shape[0],))
        return x + centres[y].to(x.dtype), y

    batches = tuple(labelled() for _ in range(TRAIN_POOL_BATCHES))
    return batches, tuple(labelled() for _ in range(HELD_OUT_BATCHES))


def loss_function(
    head: str, kind: str = CROSS_ENTROPY
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """Cross-entropy on logits; after a probability head, the negative log-likelihood; MSE to
    the target (mse_loss is on autocast's float32 list, so a bfloat16 output is compared in
    float32 with the float32 target)."""
    if kind == MSE:
        return F.mse_loss
    if head == "log_softmax":
        return F.nll_loss
    if head == "softmax":
        return lambda probs, y: F.nll_loss(torch.log(probs.clamp_min(1e-12)), y)
    return F.cross_entropy


def make_optimizer(name: str, lr: float, model: torch.nn.Module) -> torch.optim.Optimizer:
    """The config's `optimizer` at its `lr` (SGD with momentum 0.9, or AdamW)."""
    if name == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=lr)
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def uses_scaler(config: ExperimentConfig) -> bool:
    """float16's narrow range makes small gradients underflow; bfloat16 has float32's range."""
    return config.dtype == "float16" and config.scaler


@dataclass(frozen=True)
class StepTiming:
    """One training step: its loss and the seconds of each phase (CPU ops run synchronously,
    so each phase's wall time is its own)."""

    loss: float
    forward_s: float
    backward_s: float
    optimizer_s: float
    skipped: bool = False

    @property
    def total_s(self) -> float:
        return self.forward_s + self.backward_s + self.optimizer_s


class Trainer:
    """One model, its optimizer and (for float16 autocast) its GradScaler; `step` trains once."""

    def __init__(
        self,
        config: ExperimentConfig,
        model: torch.nn.Module,
        dtype: torch.dtype | None,
        loss_kind: str = CROSS_ENTROPY,
    ) -> None:
        self.model = model
        self.model.train()
        self.dtype = dtype
        self.loss_fn = loss_function(config.head, loss_kind)
        self.optimizer = make_optimizer(config.optimizer, config.lr, model)
        self.scaler: torch.amp.GradScaler | None = None
        if dtype is not None and uses_scaler(config):
            self.scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE)

    def step(self, x: torch.Tensor, y: torch.Tensor) -> StepTiming:
        """zero_grad, forward + loss, backward, optimizer step (through the scaler if any)."""
        self.optimizer.zero_grad(set_to_none=True)
        start = time.perf_counter()
        with autocast_context(self.dtype):
            loss = self.loss_fn(self.model(x), y)
        forward_end = time.perf_counter()
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        backward_end = time.perf_counter()
        skipped = False
        if self.scaler is not None:
            scale = self.scaler.get_scale()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            skipped = self.scaler.get_scale() < scale  # the scaler backs off only on inf/NaN
        else:
            self.optimizer.step()
        end = time.perf_counter()
        return StepTiming(
            loss=float(loss.detach()),
            forward_s=forward_end - start,
            backward_s=backward_end - forward_end,
            optimizer_s=end - backward_end,
            skipped=skipped,
        )

    def timed_step(self, task: Task) -> Callable[[], object]:
        """A callable for the timing protocol: one step on the next batch of the task."""
        counter = itertools.count()

        def call() -> StepTiming:
            return self.step(*task.batch(next(counter)))

        return call


# ---- the measurements of one probed step ------------------------------------------------------


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


@dataclass(frozen=True)
class StepProbe:
    """One instrumented training step of one mode at the initial weights."""

    loss_dtype: str
    output_dtype: str
    grad_dtypes: dict[str, str]
    grads: dict[str, torch.Tensor]
    saved_bytes: int
    saved_tensors: int
    layers: list[tuple[str, str, tuple[str, str], tuple[str, str]]]
    forward_ops: tuple[OpUse, ...]
    backward_ops: tuple[OpUse, ...]


#: A layer's backward dtypes when torch called no backward hook for it: its output is not a
#: tensor or a tuple of tensors (a Hugging Face output object), or no gradient reached it (the
#: loss does not use its output, as BERT's pooler beside the last hidden state).
NOT_SEEN = "unseen"


def _output_tensor(output: object) -> torch.Tensor | None:
    """The tensor a layer's output stands for (families.user.loader.main_tensor's rule)."""
    from autocast_explorer.core.experiment.families.user.loader import main_tensor

    found = main_tensor(output)
    return found if isinstance(found, torch.Tensor) else None


def _name(t: torch.Tensor | None) -> str:
    return dtype_name(t.dtype) if t is not None else "none"


def _op_uses(tracer: OpTracer) -> tuple[OpUse, ...]:
    counts = Counter((r.op, r.in_dtypes, r.out_dtypes) for r in tracer.records)
    return tuple(OpUse(op, i, o, n) for (op, i, o), n in counts.items())


def traced_modules(
    config: ExperimentConfig, model: torch.nn.Module
) -> list[tuple[str, torch.nn.Module]]:
    """The modules a training step records: a built-in family's top-level children; for your
    own model the rows `run` shows, cut at --layer-depth (default: ≤ 40 rows), so a ResNet's
    or a BERT's table stays readable and names the same modules as its inference run."""
    if not config.is_user_model:
        return list(model.named_children())
    named = [(name, module) for name, module in model.named_modules() if name]
    shown, _info = rows_at_depth(config, [name for name, _ in named])
    return [(name, module) for name, module in named if name in shown]


def probe_step(
    config: ExperimentConfig,
    model: torch.nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    dtype: torch.dtype | None,
    loss_kind: str = CROSS_ENTROPY,
) -> StepProbe:
    """Forward + loss + backward once, observed four ways, without an optimizer step.

    Forward/backward hooks give each layer's dtypes; an OpTracer (a TorchDispatchMode, which sees
    the autograd engine's backward ops too) records the aten ops of each phase; a pack hook of
    `saved_tensors_hooks` counts the bytes of every tensor autograd saves for backward. With a
    GradScaler the loss is scaled as in training and the gradients unscaled before reading.
    """
    model.train()
    model.zero_grad(set_to_none=True)
    layers: dict[str, dict[str, Any]] = {}
    handles = []
    for name, module in traced_modules(config, model):
        entry = layers.setdefault(name, {"kind": type(module).__name__})

        def forward_hook(
            mod: torch.nn.Module,
            args: tuple[Any, ...],
            kwargs: dict[str, Any],
            output: object,
            e: dict[str, Any] = entry,
        ) -> None:
            # Inputs may come as keywords (a Hugging Face model calls its parts so); an output
            # object is read by the rule every run path uses (its logits or last hidden state).
            x_in = first_tensor(args) if args else first_tensor(tuple(kwargs.values()))
            e["forward"] = (_name(x_in), _name(_output_tensor(output)))

        def backward_hook(
            mod: torch.nn.Module,
            grad_in: tuple[torch.Tensor | None, ...],
            grad_out: tuple[torch.Tensor | None, ...],
            e: dict[str, Any] = entry,
        ) -> None:
            e["backward"] = (_name(first_tensor(grad_out)), _name(first_tensor(grad_in)))

        handles.append(module.register_forward_hook(forward_hook, with_kwargs=True))
        handles.append(module.register_full_backward_hook(backward_hook))
    saved = [0, 0]

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved[0] += t.numel() * t.element_size()
        saved[1] += 1
        return t

    use_scaler = dtype is not None and uses_scaler(config)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE) if use_scaler else None
    label = "plain" if dtype is None else "autocast"
    try:
        with (
            warnings.catch_warnings(),
            torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t),
            OpTracer(label) as forward_tracer,
            autocast_context(dtype),
        ):
            # A layer returning an object (a Hugging Face ModelOutput) gets no backward hook
            # call; torch warns so, and the layer's backward reads NOT_SEEN.
            warnings.filterwarnings("ignore", message="For backward hooks to be called")
            output = model(x)
            loss = loss_function(config.head, loss_kind)(output, y)
        with warnings.catch_warnings(), OpTracer(label) as backward_tracer:
            # The input needs no gradient, so the first layer's hook reports grad_in as None;
            # torch warns about exactly that, which is what we want to record.
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            (scaler.scale(loss) if scaler is not None else loss).backward()
    finally:
        for handle in handles:
            handle.remove()
    scale = scaler.get_scale() if scaler is not None else 1.0
    grads = {
        name: (p.grad.detach() / scale if scale != 1.0 else p.grad.detach())
        for name, p in model.named_parameters()
        if p.grad is not None
    }
    return StepProbe(
        loss_dtype=dtype_name(loss.dtype),
        output_dtype=dtype_name(output.dtype),
        grad_dtypes={
            name: dtype_name(p.grad.dtype)
            for name, p in model.named_parameters()
            if p.grad is not None
        },
        grads=grads,
        saved_bytes=saved[0],
        saved_tensors=saved[1],
        layers=[
            (
                name,
                e["kind"],
                e.get("forward", ("none", "none")),
                e.get("backward", (NOT_SEEN, NOT_SEEN)),
            )
            for name, e in layers.items()
            if "forward" in e
        ],
        forward_ops=_op_uses(forward_tracer),
        backward_ops=_op_uses(backward_tracer),
    )


def underflowed_elements(plain: dict[str, torch.Tensor], auto: dict[str, torch.Tensor]) -> int:
    """Gradient elements that are zero under autocast but not in float32, same weights and batch.

    That is what underflow does: a product or sum too small for the low dtype becomes 0.
    """
    return sum(
        int(((auto[name] == 0) & (grad != 0)).sum()) for name, grad in plain.items() if name in auto
    )


# ---- the report --------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class StepProgress:
    """Plain data streamed after each interleaved pair of steps (for a live loss chart)."""

    step: int
    steps: int
    loss_plain: float
    loss_autocast: float
    #: Real data, at the end of an epoch: its number and both copies' held-out accuracy.
    epoch: int = 0
    accuracy_plain: float | None = None
    accuracy_autocast: float | None = None
    #: The loss trained on (cross_entropy or mse): the live chart's caption.
    loss_kind: str = CROSS_ENTROPY


PartialFn = Callable[[StepProgress], None]


@dataclass
class TrainingRun:
    """What `train_side_by_side` hands the engine: the report, the trainers for timing, the task."""

    report: TrainReport
    trainers: dict[str, Trainer]
    task: Task
    cold_ms: list[float]
    held_out_logits: dict[str, torch.Tensor]


@dataclass(frozen=True)
class HeldOut:
    """A trained copy on the held-out batches: its outputs (float32 copies), its loss and, for
    a classifier, its accuracy (None for MSE)."""

    outputs: torch.Tensor
    loss: float
    accuracy: float | None


def _held_out(
    config: ExperimentConfig, model: torch.nn.Module, task: Task, dtype: torch.dtype | None
) -> HeldOut:
    """Score a model on the held-out batches in the precision it trained in (eval mode)."""
    model.eval()
    with torch.no_grad(), autocast_context(dtype):
        outputs = torch.cat([model(x).float() for x, _ in task.held_out])
    targets = torch.cat([y for _, y in task.held_out])
    model.train()
    with torch.no_grad():
        loss = float(loss_function(config.head, task.loss_kind)(outputs, targets))
    accuracy = None
    if task.loss_kind == CROSS_ENTROPY:
        accuracy = float((outputs.argmax(dim=1) == targets).float().mean())
    return HeldOut(outputs, loss, accuracy)


def train_side_by_side(
    config: ExperimentConfig,
    reporter: Reporter,
    partial: PartialFn | None = None,
    source: ModelSource = MLP_SOURCE,
    task: Task | None = None,
    epoch_steps: int = 0,
) -> TrainingRun:
    """Probe one step per mode, then train both copies `config.steps` steps, interleaved.

    With a `task` of real rows and `epoch_steps` (steps per epoch), both copies are scored on
    the held-out rows after every epoch. Cancellation is checked between steps (a step itself
    cannot be interrupted).
    """
    low = low_precision_dtype(config)
    initial = source.build_model(config)
    if task is None:
        task = make_task(config, source)
    x0, y0 = task.batch(0)
    kind = task.loss_kind

    reporter.report(0.0, "probing one training step per mode (dtypes, ops, saved bytes)")
    probes = {"plain": probe_step(config, copy.deepcopy(initial), x0, y0, None, kind)}
    try:
        probes["autocast"] = probe_step(config, copy.deepcopy(initial), x0, y0, low, kind)
    except Exception as exc:  # torch raises RuntimeError, oneDNN sometimes others
        if is_out_of_memory(exc):
            raise
        raise AutocastFailed(
            "autocast",
            f"the {config.dtype} autocast training step raised, so there is no second copy to "
            f"train beside float32 ({error_text(exc)}); `run` without --mode train shows this "
            "finding",
        ) from None
    reporter.check()
    trainers = {
        "plain": Trainer(config, copy.deepcopy(initial), None, kind),
        "autocast": Trainer(config, copy.deepcopy(initial), low, kind),
    }
    timings: dict[str, list[StepTiming]] = {m: [] for m in MODES}
    epochs: list[EpochScore] = []
    for step in range(config.steps):
        x, y = task.batch(step)
        for mode in MODES:
            timings[mode].append(trainers[mode].step(x, y))
        score = None
        if epoch_steps and (step + 1) % epoch_steps == 0:
            score = _epoch_score(config, trainers, task, low, timings, step + 1, epoch_steps)
            epochs.append(score)
        if partial is not None:
            partial(
                StepProgress(
                    step=step + 1,
                    steps=config.steps,
                    loss_plain=timings["plain"][-1].loss,
                    loss_autocast=timings["autocast"][-1].loss,
                    epoch=score.epoch if score else 0,
                    accuracy_plain=score.accuracy["plain"] if score else None,
                    accuracy_autocast=score.accuracy["autocast"] if score else None,
                    loss_kind=kind,
                )
            )
        reporter.report(0.1 + 0.9 * (step + 1) / config.steps, f"training step {step + 1}")
        reporter.check()

    held = {
        mode: _held_out(config, trainers[mode].model, task, dtype)
        for mode, dtype in (("plain", None), ("autocast", low))
    }
    accuracy = {m: h.accuracy for m, h in held.items() if h.accuracy is not None}

    scaler = trainers["autocast"].scaler
    grads_plain, grads_auto = probes["plain"].grads, probes["autocast"].grads
    report = TrainReport(
        steps=config.steps,
        loss={m: tuple(s.loss for s in timings[m]) for m in MODES},
        accuracy=accuracy,
        held_out_rows=sum(int(y.shape[0]) for _, y in task.held_out),
        loss_dtype={m: probes[m].loss_dtype for m in MODES},
        output_dtype={m: probes[m].output_dtype for m in MODES},
        grad_dtypes=probes["autocast"].grad_dtypes,
        grad_dtypes_plain=probes["plain"].grad_dtypes,
        saved_bytes={m: probes[m].saved_bytes for m in MODES},
        saved_tensors={m: probes[m].saved_tensors for m in MODES},
        layers=tuple(_layer_traces(probes)),
        ops={
            m: {"forward": probes[m].forward_ops, "backward": probes[m].backward_ops} for m in MODES
        },
        phases={m: PhaseTimes.of(timings[m]) for m in MODES},
        scaler=ScalerReport(
            used=scaler is not None,
            enabled=bool(scaler is not None and scaler.is_enabled()),
            init_scale=INIT_SCALE if scaler is not None else None,
            final_scale=scaler.get_scale() if scaler is not None else None,
            skipped_steps=sum(s.skipped for s in timings["autocast"]),
            underflowed_grads=underflowed_elements(grads_plain, grads_auto),
            grad_elements=sum(g.numel() for g in grads_plain.values()),
        ),
        nonfinite_steps={m: sum(not math.isfinite(s.loss) for s in timings[m]) for m in MODES},
        epochs=tuple(epochs),
        loss_kind=kind,
        held_out_loss={m: h.loss for m, h in held.items()},
        target_shape=tuple(y0.shape[1:]) if kind == MSE else (),
    )
    return TrainingRun(
        report=report,
        trainers=trainers,
        task=task,
        cold_ms=[timings[m][0].total_s * 1e3 for m in MODES],
        held_out_logits={m: h.outputs for m, h in held.items()},
    )


def _epoch_score(
    config: ExperimentConfig,
    trainers: dict[str, Trainer],
    task: Task,
    low: torch.dtype,
    timings: dict[str, list[StepTiming]],
    step: int,
    epoch_steps: int,
) -> EpochScore:
    """Both copies at the end of an epoch: mean training loss, held-out accuracy (each in the
    precision it trains in)."""
    return EpochScore(
        epoch=step // epoch_steps,
        step=step,
        loss={m: float(np.mean([t.loss for t in timings[m][-epoch_steps:]])) for m in MODES},
        accuracy={
            m: _epoch_accuracy(config, trainers[m].model, task, dtype)
            for m, dtype in (("plain", None), ("autocast", low))
        },
    )


def _epoch_accuracy(
    config: ExperimentConfig, model: torch.nn.Module, task: Task, dtype: torch.dtype | None
) -> float:
    """Epochs are scored on real rows, which always have classes."""
    accuracy = _held_out(config, model, task, dtype).accuracy
    if accuracy is None:
        raise ValueError("epochs are scored only for a task with classes")
    return accuracy


def _layer_traces(probes: dict[str, StepProbe]) -> Iterator[LayerTrace]:
    for plain, auto in zip(probes["plain"].layers, probes["autocast"].layers, strict=True):
        yield LayerTrace(
            name=plain[0],
            kind=plain[1],
            forward={"plain": plain[2], "autocast": auto[2]},
            backward={"plain": plain[3], "autocast": auto[3]},
        )
