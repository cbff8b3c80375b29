"""The data half of a run: load and fit the data, train (or load the user's weights), evaluate.

The engine calls `fitted` before its guards (the data decide the model's input width) and
`prepare` in place of building a random model and input: the trained model is then measured
like any other, on a batch of held-out rows instead of random numbers.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from autocast_explorer.core.data.answers import AccuracyReport, compare_answers, predict
from autocast_explorer.core.data.dataset import Dataset, load_dataset, split
from autocast_explorer.core.data.records import DataInfo, EpochRecord
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.data_fit import (
    EpochFn,
    fit_config,
    input_shape,
    load_checkpoint,
    train_float32,
)
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.train_task import refuse_untrainable

if TYPE_CHECKING:
    import torch

    from autocast_explorer.core.experiment.data_task import DataTask
    from autocast_explorer.core.runtime.progress import Reporter


@dataclass
class PreparedData:
    """A fitted model ready to be measured, the held-out batch it is timed on, the answers."""

    model: torch.nn.Module
    x: torch.Tensor
    info: DataInfo
    accuracy: AccuracyReport | None  # None when the autocast forward raised (a finding)
    #: The held-out rows (as the data set holds them, scaled) and their labels, and the shape
    #: one row takes as the model's input: what a plan judges its candidates on.
    held_out: tuple[np.ndarray, np.ndarray] | None = None
    row_shape: tuple[int, ...] = ()


def fitted(config: ExperimentConfig) -> tuple[ExperimentConfig, Dataset]:
    """The data set of `config.data` and the config fitted to it (DataError if they clash, or
    if the file's arrays would take more than the run's memory budget)."""
    from autocast_explorer.core.experiment.guards import memory_budget_bytes

    dataset = load_dataset(config.data, memory_budget_bytes(config))
    return fit_config(config, dataset), dataset


def prepare(
    config: ExperimentConfig,
    dataset: Dataset,
    reporter: Reporter,
    on_epoch: EpochFn | None = None,
) -> PreparedData:
    """Build the seeded model, train it in float32 (or load the checkpoint), evaluate both ways
    with the config's layers kept in float32 (refused before training if a pattern names none).
    `config` must already be fitted to `dataset` (see `fitted`)."""
    import torch

    from autocast_explorer.core.experiment.interventions import keep_float32, kept_layers
    from autocast_explorer.core.experiment.model import build_model, low_precision_dtype

    shape = input_shape(config, dataset)
    x = dataset.x / np.float32(dataset.scale) if dataset.scale != 1.0 else dataset.x
    model = build_model(config)
    kept = kept_layers(model, config.keep_float32)
    train_rows, test_rows, history = _weights(config, dataset, model, x, shape, reporter, on_epoch)
    reporter.report(0.9, "evaluating the held-out rows in float32 and under autocast")
    test_x, test_y = x[test_rows], dataset.y[test_rows]
    accuracy, auto = None, None
    with user_phase(config, "answering the held-out rows"), keep_float32(model, kept):
        plain = predict(model, shape, test_x, None)
        # An autocast forward that raises: the engine's own records the error as the finding.
        with contextlib.suppress(Exception):
            auto = predict(model, shape, test_x, low_precision_dtype(config))
    if auto is not None:
        accuracy = compare_answers(
            test_y,
            plain,
            auto,
            config.dtype,
            config.seed,
            rows=dataset.x[test_rows],
            index=test_rows,
        )
    reporter.check()
    timed = test_x[np.arange(config.batch) % len(test_rows)]
    info = DataInfo(
        name=dataset.name,
        n_train=len(train_rows),
        n_test=len(test_rows),
        classes=dataset.classes,
        shape=dataset.row_shape,
        image=dataset.image,
        epochs=0 if config.checkpoint else config.epochs,
        checkpoint=Path(config.checkpoint).name if config.checkpoint else "",
        history=history,
    )
    return PreparedData(
        model=model,
        x=torch.from_numpy(np.ascontiguousarray(timed)).reshape(-1, *shape),
        info=info,
        accuracy=accuracy,
        held_out=(test_x, test_y),
        row_shape=tuple(shape),
    )


def _weights(
    config: ExperimentConfig,
    dataset: Dataset,
    model: torch.nn.Module,
    x: np.ndarray,
    shape: tuple[int, ...],
    reporter: Reporter,
    on_epoch: EpochFn | None,
) -> tuple[np.ndarray, np.ndarray, tuple[EpochRecord, ...]]:
    """The checkpoint's weights (every row held out) or float32 training on the seeded split:
    the training and held-out rows and the epochs trained."""
    import torch

    from autocast_explorer.core.data.files import read_state_dict

    if config.checkpoint:
        reporter.report(0.0, f"loading the weights of {Path(config.checkpoint).name}")
        from autocast_explorer.core.experiment.guards import memory_budget_bytes

        state = read_state_dict(config.checkpoint, memory_budget_bytes(config))
        load_checkpoint(model, state, config.title)
        return np.arange(0), np.arange(dataset.rows), ()
    refuse_untrainable(config, "model")
    parts = split(dataset, config.seed)
    with torch.enable_grad(), user_phase(config, "training in float32 on the data"):
        history = train_float32(
            model,
            shape,
            x[parts.train],
            dataset.y[parts.train],
            (x[parts.test], dataset.y[parts.test]),
            config=config,
            reporter=reporter.span(0.0, 0.9),
            on_epoch=on_epoch,
        )
    return parts.train, parts.test, history


def train_data_info(dataset: Dataset, task: DataTask, epochs: int) -> DataInfo:
    """The `data` object of a training-mode run (its per-epoch scores live in `train.epochs`)."""
    return DataInfo(
        name=dataset.name,
        n_train=int(task.y.shape[0]),
        n_test=sum(int(y.shape[0]) for _, y in task.held_out),
        classes=dataset.classes,
        shape=dataset.row_shape,
        image=dataset.image,
        epochs=epochs,
        checkpoint="",  # both written, empty, as in every `data` object
        history=(),
    )
