"""One training step of one copy: its optimizer, its GradScaler, the time of each phase.

reproduce.py pastes `make_optimizer`: it uses only torch.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.train_task import CROSS_ENTROPY, Task, loss_function
from autocast_explorer.core.runtime.autocast import autocast_context

#: GradScaler's starting scale (torch's default, written out so the report can state it).
INIT_SCALE = 2.0**16


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
