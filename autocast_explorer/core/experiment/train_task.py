"""The task a training run learns and the loss it learns it by.

Both copies see the same batches of one seeded task in the same order. The synthetic task is a
classifier's (a centre per class plus the input noise, cross-entropy) or, for an output that is
not batch × classes logits, one fixed random target (MSE); real rows come from data_task.py.
The task needs only a `ModelSource` (build the model, draw an input batch, plan the loss), so
every model family can train. reproduce.py pastes `class_task` and `loss_function`: they use only
torch and this module's constants.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.memory_bound import HELD_OUT_BATCHES, TRAIN_POOL_BATCHES
from autocast_explorer.core.experiment.model import build_input, build_model
from autocast_explorer.core.runtime.errors import ConfigError

#: Distance of each class's centre from the origin, in units of the input noise: large enough
#: that the task is learnable in tens of steps, small enough that the loss falls gradually.
CENTROID_NORM = 4.0
#: The task is drawn from its own stream, so changing the model does not change the data.
TASK_SEED_OFFSET = 7919


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
    """The built-in families are classifiers (of as many classes as their family counts); a
    user model is one when its batch-1 probe measured batch × classes float logits, else
    it trains with MSE. The probe reads the same tensor every run path reads (the output
    adapter's rule: a Hugging Face output's `logits`, else its `last_hidden_state`)."""
    if not config.is_user_model:
        return LossPlan(CROSS_ENTROPY, family(config).classes(config))
    from autocast_explorer.core.experiment.families.user.probe import probe

    measured = probe(config)
    if measured.classes:
        return LossPlan(CROSS_ENTROPY, measured.classes)
    return LossPlan(MSE, target_shape=tuple(measured.output_shape[1:]))


def refuse_untrainable(config: ExperimentConfig, field_name: str = "mode") -> None:
    """ConfigError (one line, before any step) for your own model that training cannot take:
    no parameter that requires a gradient, an output that is not floating point, or one without
    a row per input row (a scalar). Built-in families always train; `field_name` is the field
    the window shows it under ("mode" for --mode train, "model" for --data's float32 fit)."""
    if not config.is_user_model:
        return
    from autocast_explorer.core.experiment.families.user.probe import probe

    measured = probe(config)
    shape = measured.output_shape
    if not measured.trainable:
        need, found = "a parameter that requires a gradient", "has none"
    elif not measured.output_dtype.startswith(("float", "bfloat")):
        need = "a floating-point output to take a loss of"
        found = f"outputs {measured.output_dtype}"
    elif not shape or shape[0] != 1:
        out = "×".join(map(str, shape)) if shape else "a 0-dimensional tensor"
        need, found = "one output row per input row", f"outputs {out} for a batch of 1"
    else:
        return
    raise ConfigError(field_name, f"training needs {need}; {config.model} {found}")


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

    def inputs(self) -> tuple[torch.Tensor, ...]:
        """Every input it feeds, training batches then held-out ones (the result's `input`)."""
        return tuple(x for x, _ in (*self.batches, *self.held_out))


class Task(Protocol):
    """What training draws from: the synthetic task, or real rows (experiment/data_task.py)."""

    @property
    def held_out(self) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]: ...

    @property
    def loss_kind(self) -> str: ...

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]: ...

    def inputs(self) -> tuple[torch.Tensor, ...]:
        """Every input it feeds, a batch first (the result's `input` takes its shape)."""
        ...


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
