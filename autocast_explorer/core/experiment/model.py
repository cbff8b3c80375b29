"""A config's model and input, whatever its family, in the tutorial's order: seed, build the
layers in order, eval(), then draw x (the MLP is built in families/mlp.py)."""

from __future__ import annotations

import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES


def low_precision_dtype(config: ExperimentConfig) -> torch.dtype:
    return TORCH_DTYPES[config.dtype]


def build_model(config: ExperimentConfig) -> torch.nn.Module:
    """The config's model, whatever its family (seeded; in the mode it is measured in)."""
    return family(config).build_model(config)


def build_input(config: ExperimentConfig) -> torch.Tensor:
    """The config's input, shaped for its family, drawn from the RNG stream as it stands."""
    return family(config).build_input(config)


def build(config: ExperimentConfig) -> tuple[torch.nn.Module, torch.Tensor]:
    """The config's model (any family), then its input, in the tutorial's order."""
    model = build_model(config)
    return model, build_input(config)
