"""Real rows as a training task: training mode's two copies see the data's batches, epoch by
epoch, and are scored on the held-out rows after every epoch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from autocast_explorer.core.data.dataset import Dataset, split
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.data_fit import epoch_batches, input_shape, steps_per_epoch


@dataclass(frozen=True)
class DataTask:
    """The task training mode trains on: `batch(step)` walks the epochs' seeded shuffles."""

    x: torch.Tensor  # training rows, shaped for the model
    y: torch.Tensor
    held_out: tuple[tuple[torch.Tensor, torch.Tensor], ...]
    batch_rows: int
    seed: int
    loss_kind: str = "cross_entropy"  # real rows have classes

    @property
    def steps_per_epoch(self) -> int:
        return steps_per_epoch(int(self.y.shape[0]), self.batch_rows)

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        epoch, within = divmod(step, self.steps_per_epoch)
        rows = epoch_batches(int(self.y.shape[0]), self.batch_rows, self.seed, epoch)[within]
        picked = torch.from_numpy(rows)
        return self.x[picked], self.y[picked]

    def inputs(self) -> tuple[torch.Tensor, ...]:
        """The first batch, then every training and held-out row (the result's `input`)."""
        return (self.batch(0)[0], self.x, *(x for x, _ in self.held_out))


def data_task(config: ExperimentConfig, dataset: Dataset) -> DataTask:
    """The seeded split of `dataset` as a task, rows scaled and shaped for `config`'s model."""
    shape = input_shape(config, dataset)
    x = dataset.x / np.float32(dataset.scale) if dataset.scale != 1.0 else dataset.x
    parts = split(dataset, config.seed)

    def tensors(rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            torch.from_numpy(np.ascontiguousarray(x[rows])).reshape(-1, *shape),
            torch.from_numpy(dataset.y[rows]),
        )

    train_x, train_y = tensors(parts.train)
    return DataTask(
        x=train_x,
        y=train_y,
        held_out=(tensors(parts.test),),
        batch_rows=config.batch,
        seed=config.seed,
    )
