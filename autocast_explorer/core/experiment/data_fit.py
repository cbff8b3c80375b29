"""Fitting a model to the data: the config's input and classes set from the data set, float32
training for a fixed, seeded number of epochs, or the user's trained weights loaded instead.

Training takes any `nn.Module` and the per-row input shape it wants (flat features, or (C, H, W)
for a family whose rows are images), so a user's own classifier trains and evaluates through
the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from autocast_explorer.core.data.dataset import Dataset
from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.data.records import EpochRecord
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_rules import MAX_WIDTH, row_models
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.families.base import ROWS_OF_IMAGES
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    import torch

    from autocast_explorer.core.runtime.progress import Reporter

#: The RNG stream of the epochs' shuffles (the model's own seed draws its weights).
SHUFFLE_SEED_OFFSET = 3571
#: A checkpoint's mismatching keys named in one line before "… and N more".
LISTED_KEYS = 4


def fit_config(config: ExperimentConfig, dataset: Dataset) -> ExperimentConfig:
    """`config` with its input and class count taken from the data (DataError if it cannot):
    by its family when the family takes rows (MLP: the widths; CNN: channels, image, classes),
    else by the user's own model's probe."""
    if config.is_user_model:
        return _fit_user_model(config, dataset)
    fam = family(config)
    if fam.rows:
        _classes_fit(dataset, fam.name.upper())
        return fam.fit_data(config, dataset)
    raise DataError(
        f"--data needs --model {', '.join(row_models())} or your own (the {config.model} family "
        "takes no rows of features)"
    )


def _classes_fit(dataset: Dataset, model: str) -> None:
    """The data's classes are the model's outputs: no more than its widest layer."""
    if dataset.classes > MAX_WIDTH:
        raise DataError(
            f"y: {dataset.classes:,} classes (labels 0…{dataset.classes - 1}) are more than "
            f"the {model} can output (at most {MAX_WIDTH:,})"
        )


def _fit_user_model(config: ExperimentConfig, dataset: Dataset) -> ExperimentConfig:
    """Your own model takes the rows as they are (C, H, W), else flattened; its logits must
    number the data's classes. Its batch-1 probe decides (its own error when it rejects both)."""
    from autocast_explorer.core.experiment.families.user.probe import probe

    shapes = list(dict.fromkeys([dataset.row_shape, (dataset.features,)]))
    first_error: ConfigError | None = None
    for shape in shapes:
        fitted = config.replace(input_shape=shape, input_kind="float")
        try:
            measured = probe(fitted)
        except ConfigError as exc:
            first_error = first_error or exc
            continue
        if measured.classes != dataset.classes:
            out = "×".join(map(str, ("batch", *measured.output_shape[1:])))
            raise DataError(
                f"y: the data has {dataset.classes} classes, but {config.model} outputs {out} "
                f"for rows of shape {shape} (its logits must be batch × {dataset.classes})"
            )
        return fitted
    assert first_error is not None
    raise first_error


def input_shape(config: ExperimentConfig, dataset: Dataset) -> tuple[int, ...]:
    """The shape one row takes on its way into the config's model."""
    if config.is_user_model and config.input_shape:
        return tuple(config.input_shape)
    return dataset.row_shape if family(config).rows == ROWS_OF_IMAGES else (dataset.features,)


EpochFn = Callable[[EpochRecord], None]


def epoch_batches(rows: int, batch: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The row order of one epoch in batches: a fresh seeded shuffle per epoch. Every row is
    trained on each epoch; a last batch of one row (of a --batch above 1) joins the batch before
    it: a model that normalises over the batch (BatchNorm) refuses one row in training."""
    order = np.random.default_rng((seed + SHUFFLE_SEED_OFFSET, epoch)).permutation(rows)
    starts = list(range(0, rows, batch))
    if batch > 1 and len(starts) > 1 and rows - starts[-1] == 1:
        starts.pop()
    ends = [*starts[1:], rows]
    return [order[start:end] for start, end in zip(starts, ends, strict=True)]


def steps_per_epoch(rows: int, batch: int) -> int:
    """How many batches `epoch_batches` makes of `rows` rows."""
    steps = -(-rows // batch)
    return steps - 1 if batch > 1 and steps > 1 and rows % batch == 1 else steps


def train_float32(
    model: torch.nn.Module,
    shape: tuple[int, ...],
    x: np.ndarray,
    y: np.ndarray,
    held_out: tuple[np.ndarray, np.ndarray],
    *,
    config: ExperimentConfig,
    reporter: Reporter,
    on_epoch: EpochFn | None = None,
) -> tuple[EpochRecord, ...]:
    """Train `model` in float32 for `config.epochs` epochs of `config.batch` rows.

    The optimizer, learning rate and loss are the config's (training mode's); cancellation is
    checked between batches. Returns one record per epoch.
    """
    import torch

    from autocast_explorer.core.data.answers import predict
    from autocast_explorer.core.experiment.train_step import make_optimizer
    from autocast_explorer.core.experiment.train_task import loss_function

    loss_fn = loss_function(config.head)
    optimizer = make_optimizer(config.optimizer, config.lr, model)
    inputs = torch.from_numpy(np.ascontiguousarray(x)).reshape(-1, *shape)
    labels = torch.from_numpy(y)
    records = []
    for epoch in range(config.epochs):
        model.train()
        losses = []
        for rows in epoch_batches(len(y), config.batch, config.seed, epoch):
            picked = torch.from_numpy(rows)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(inputs[picked]), labels[picked])
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
            reporter.check()
        logits = predict(model, shape, held_out[0], None)
        record = EpochRecord(
            epoch=epoch + 1,
            loss=float(np.mean(losses)),
            accuracy=float((logits.argmax(axis=1) == held_out[1]).mean()),
        )
        records.append(record)
        if on_epoch is not None:
            on_epoch(record)
        reporter.report(
            (epoch + 1) / config.epochs,
            f"training in float32: epoch {epoch + 1}/{config.epochs}, "
            f"held-out accuracy {record.accuracy:.1%}",
        )
    model.eval()
    return tuple(records)


def load_checkpoint(model: torch.nn.Module, state: dict[str, torch.Tensor], title: str) -> None:
    """Load the user's weights into `model`; DataError listing the first mismatching keys."""
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing {_listed(missing)}")
        if unexpected:
            parts.append(f"unexpected {_listed(unexpected)}")
        raise DataError(f"keys do not match the {title}: {'; '.join(parts)}", "checkpoint")
    wrong = [
        f"{k} is {tuple(state[k].shape)} in the file but {tuple(v.shape)} in the model"
        for k, v in own.items()
        if tuple(state[k].shape) != tuple(v.shape)
    ]
    if wrong:
        more = f" … and {len(wrong) - LISTED_KEYS} more" if len(wrong) > LISTED_KEYS else ""
        raise DataError(
            f"shapes do not match the {title}: {'; '.join(wrong[:LISTED_KEYS])}{more}",
            "checkpoint",
        )
    bad = [k for k, v in state.items() if v.is_floating_point() and not bool(v.isfinite().all())]
    if bad:
        raise DataError(f"{_listed(bad)} hold NaN or inf", "checkpoint")
    model.load_state_dict(state)
    model.eval()


def _listed(keys: list[str]) -> str:
    more = f" … and {len(keys) - LISTED_KEYS} more" if len(keys) > LISTED_KEYS else ""
    return ", ".join(keys[:LISTED_KEYS]) + more
