"""Training under autocast: two identical models, one float32 and one autocast, side by side.

What autocast does in a training loop differs from inference: the forward runs in the low dtype,
the loss comes back float32 (cross_entropy is on CPU autocast's float32 list), gradients are
float32 because the parameters are, and the tensors autograd saves for backward are stored in the
low dtype — the real memory saving. float16 also needs a GradScaler. Everything here is measured:
dtypes from hooks and a dispatch-mode trace, saved bytes from `saved_tensors_hooks`.

Both runs start from one seeded initialisation and see the same batches of one seeded synthetic
task in the same order; their steps are interleaved so drift on a shared CPU hits both alike.
This module is the loop; its parts live beside it: the task and the loss (train_task.py), one
step of one copy (train_step.py), the probed step (train_probe.py) and the report with its
document part (train_report.py). Their public names are importable from here too, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from autocast_explorer.core.experiment.capture import AutocastFailed
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.interventions import kept_copy, kept_layers
from autocast_explorer.core.experiment.memory_bound import HELD_OUT_BATCHES, TRAIN_POOL_BATCHES
from autocast_explorer.core.experiment.model import low_precision_dtype
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.experiment.train_probe import (
    NOT_SEEN,
    StepProbe,
    probe_step,
    traced_modules,
    underflowed_elements,
)
from autocast_explorer.core.experiment.train_report import (
    MODES,
    EpochScore,
    LayerTrace,
    OpUse,
    PhaseTimes,
    ScalerReport,
    TrainReport,
)
from autocast_explorer.core.experiment.train_step import (
    INIT_SCALE,
    StepTiming,
    Trainer,
    make_optimizer,
    uses_scaler,
)
from autocast_explorer.core.experiment.train_task import (
    CENTROID_NORM,
    CROSS_ENTROPY,
    LOSS_NAMES,
    MLP_SOURCE,
    MSE,
    TASK_SEED_OFFSET,
    LossPlan,
    ModelSource,
    SyntheticTask,
    Task,
    class_task,
    loss_function,
    loss_plan,
    make_task,
    refuse_untrainable,
)
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.errors import error_text
from autocast_explorer.core.runtime.progress import Reporter

__all__ = [
    "CENTROID_NORM",
    "CROSS_ENTROPY",
    "HELD_OUT_BATCHES",
    "INIT_SCALE",
    "LOSS_NAMES",
    "MLP_SOURCE",
    "MODES",
    "MSE",
    "NOT_SEEN",
    "TASK_SEED_OFFSET",
    "TRAIN_POOL_BATCHES",
    "EpochScore",
    "HeldOut",
    "LayerTrace",
    "LossPlan",
    "ModelSource",
    "OpUse",
    "PartialFn",
    "PhaseTimes",
    "ScalerReport",
    "StepProbe",
    "StepProgress",
    "StepTiming",
    "SyntheticTask",
    "Task",
    "TrainReport",
    "Trainer",
    "TrainingRun",
    "class_task",
    "loss_function",
    "loss_plan",
    "make_optimizer",
    "make_task",
    "probe_step",
    "traced_modules",
    "train_side_by_side",
    "underflowed_elements",
    "uses_scaler",
]


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
    """What `train_side_by_side` hands the engine: the report, the trainers for timing, the
    task, and the paths of the layers both copies kept in float32."""

    report: TrainReport
    trainers: dict[str, Trainer]
    task: Task
    cold_ms: list[float]
    held_out_logits: dict[str, torch.Tensor]
    kept: tuple[str, ...] = ()


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
    cannot be interrupted). Every copy keeps the config's `keep_float32` layers in float32 (a
    pattern that names none is refused before the first step); the built model stays as built.
    """
    refuse_untrainable(config)
    low = low_precision_dtype(config)
    initial = source.build_model(config)
    kept = kept_layers(initial, config.keep_float32)
    if task is None:
        task = make_task(config, source)
    x0, y0 = task.batch(0)
    kind = task.loss_kind

    reporter.report(0.0, "probing one training step per mode (dtypes, ops, saved bytes)")
    with user_phase(config, "probing one training step"):
        probes = _probe_both(config, initial, x0, y0, low, kind, kept)
    reporter.check()
    trainers = {
        "plain": Trainer(config, kept_copy(initial, kept), None, kind),
        "autocast": Trainer(config, kept_copy(initial, kept), low, kind),
    }
    with user_phase(config, "training"):
        timings, epochs = _train_interleaved(
            config, reporter, partial, trainers, task, low, epoch_steps
        )
    with user_phase(config, "scoring the held-out rows"):
        held = {
            mode: _held_out(config, trainers[mode].model, task, dtype)
            for mode, dtype in (("plain", None), ("autocast", low))
        }
    target_shape = tuple(y0.shape[1:]) if kind == MSE else ()
    return TrainingRun(
        report=_train_report(config, probes, trainers, timings, epochs, held, task, target_shape),
        trainers=trainers,
        task=task,
        cold_ms=[timings[m][0].total_s * 1e3 for m in MODES],
        held_out_logits={m: h.outputs for m, h in held.items()},
        kept=kept,
    )


def _probe_both(
    config: ExperimentConfig,
    initial: torch.nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    low: torch.dtype,
    loss_kind: str,
    kept: tuple[str, ...],
) -> dict[str, StepProbe]:
    """One probed step per mode on copies of the initial weights (`kept` layers kept in
    float32). An autocast step that raises ends the run with AutocastFailed: there is no second
    copy to train (memory running out is no finding about autocast, so it is raised as it
    came)."""
    probes = {"plain": probe_step(config, kept_copy(initial, kept), x, y, None, loss_kind)}
    try:
        probes["autocast"] = probe_step(config, kept_copy(initial, kept), x, y, low, loss_kind)
    except Exception as exc:  # torch raises RuntimeError, oneDNN sometimes others
        if is_out_of_memory(exc):
            raise
        raise AutocastFailed(
            "autocast",
            f"the {config.dtype} autocast training step raised, so there is no second copy to "
            f"train beside float32 ({error_text(exc)}); `run` without --mode train shows this "
            "finding",
        ) from None
    return probes


def _train_interleaved(
    config: ExperimentConfig,
    reporter: Reporter,
    partial: PartialFn | None,
    trainers: dict[str, Trainer],
    task: Task,
    low: torch.dtype,
    epoch_steps: int,
) -> tuple[dict[str, list[StepTiming]], list[EpochScore]]:
    """`config.steps` steps, each copy one step on the same batch in turn, so drift on a shared
    CPU hits both alike; every epoch (real data) both copies are scored."""
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
                    loss_kind=task.loss_kind,
                )
            )
        reporter.report(0.1 + 0.9 * (step + 1) / config.steps, f"training step {step + 1}")
        reporter.check()
    return timings, epochs


def _train_report(
    config: ExperimentConfig,
    probes: dict[str, StepProbe],
    trainers: dict[str, Trainer],
    timings: dict[str, list[StepTiming]],
    epochs: list[EpochScore],
    held: dict[str, HeldOut],
    task: Task,
    target_shape: tuple[int, ...],
) -> TrainReport:
    """The report of both copies: the probes' dtypes and bytes, the steps' losses and phase
    times, the held-out scores and what the GradScaler did."""
    return TrainReport(
        steps=config.steps,
        loss={m: tuple(s.loss for s in timings[m]) for m in MODES},
        accuracy={m: h.accuracy for m, h in held.items() if h.accuracy is not None},
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
        scaler=_scaler_report(trainers["autocast"].scaler, timings["autocast"], probes),
        nonfinite_steps={m: sum(not math.isfinite(s.loss) for s in timings[m]) for m in MODES},
        epochs=tuple(epochs),
        loss_kind=task.loss_kind,
        held_out_loss={m: h.loss for m, h in held.items()},
        target_shape=target_shape,
    )


def _scaler_report(
    scaler: torch.amp.GradScaler | None,
    autocast_steps: list[StepTiming],
    probes: dict[str, StepProbe],
) -> ScalerReport:
    """The autocast copy's GradScaler after training, and the first step's underflow."""
    grads_plain, grads_auto = probes["plain"].grads, probes["autocast"].grads
    return ScalerReport(
        used=scaler is not None,
        enabled=bool(scaler is not None and scaler.is_enabled()),
        init_scale=INIT_SCALE if scaler is not None else None,
        final_scale=scaler.get_scale() if scaler is not None else None,
        skipped_steps=sum(s.skipped for s in autocast_steps),
        underflowed_grads=underflowed_elements(grads_plain, grads_auto),
        grad_elements=sum(g.numel() for g in grads_plain.values()),
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
